import { createHmac } from 'node:crypto';
import { TOKEN_MARGIN_MS } from '../../../src/adapters/delivery/accessTokenCache.js';
import { DingTalkSender } from '../../../src/adapters/delivery/DingTalkSender.js';
import { PLATFORM_SPECS } from '../../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { PlatformSendError } from '../../../src/application/ports/PlatformSender.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver, longAnswer } from '../../contract/PlatformSender.contract.js';
import {
  DINGTALK_CLIENT_ID,
  DINGTALK_CLIENT_SECRET,
  DINGTALK_SIGNING_SECRET,
  DINGTALK_WEBHOOK_TOKEN,
  FakeDingTalkServer,
  HOME_GROUP,
  OPS_GROUP,
} from '../../support/platforms/FakeDingTalkServer.js';

const targetOf = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;
const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'delivered',
    (caught: unknown) => caught,
  );
const HOME = { kind: 'platform', platform: 'dingtalk', destination: null, threadId: null } as const;

const TOKEN_PATH = '/v1.0/oauth2/accessToken';
const GROUP_SEND_PATH = '/v1.0/robot/groupMessages/send';
const WEBHOOK_PATH = '/robot/send';
const APP_CREDENTIALS_TO_CHECK =
  'check platforms.dingtalk.client_id (or DINGTALK_CLIENT_ID) and platforms.dingtalk.client_secret (or DINGTALK_CLIENT_SECRET)';

describe('DingTalkSender', () => {
  let fake: FakeDingTalkServer;
  afterEach(async () => {
    await fake.close();
  });

  const senderAt = (clock: { now: number }, section: Record<string, string>) =>
    new DingTalkSender(platformSettings('dingtalk', section, {}, { ...PLATFORM_SPECS.dingtalk!.defaults }), { now: () => clock.now });

  describe('over the open API', () => {
    beforeEach(async () => {
      fake = await FakeDingTalkServer.start('open_api');
    });

    it('gets an app token with the client id and secret, then sends the text to the group with the robot code', async () => {
      const { delivery, target } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'Nightly build passed.');
      const [tokenRequest] = fake.callsTo(TOKEN_PATH);
      expect(tokenRequest!.method).toBe('POST');
      expect(tokenRequest!.body).toEqual({ appKey: DINGTALK_CLIENT_ID, appSecret: DINGTALK_CLIENT_SECRET });
      const [send] = fake.sends;
      expect(send!.method).toBe('POST');
      expect(send!.path).toBe(GROUP_SEND_PATH);
      expect(send!.headers['x-acs-dingtalk-access-token']).toBe('d1b2c3TESTappToken0001');
      expect(send!.headers['content-type']).toMatch(/^application\/json/);
      expect(send!.body).toEqual({
        robotCode: DINGTALK_CLIENT_ID,
        openConversationId: OPS_GROUP,
        msgKey: 'sampleText',
        msgParam: '{"content":"Nightly build passed."}',
      });
      expect(receipt.messageIds).toEqual(['pqk000001/OgXq1ldG0FzEh7kYLH0ZnA==']);
    });

    it("sends as the robot robot_code names when it is not the app's own", async () => {
      fake.robotCodes.add('dingRobotOfTheOpsTeam');
      await deliveryOver(fake, { robot_code: 'dingRobotOfTheOpsTeam' }).delivery.deliver(targetOf(`dingtalk:${OPS_GROUP}`), 'x');
      expect(fake.sends[0]!.body.robotCode).toBe('dingRobotOfTheOpsTeam');
    });

    it('asks for the token once for every part and every later delivery', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, longAnswer(45_000));
      await delivery.deliver(target, 'and another');
      expect(fake.sends.length).toBeGreaterThanOrEqual(4);
      expect(fake.tokenRequests).toBe(1);
    });

    it('keeps the token until shortly before expireIn, then asks for a new one', async () => {
      const clock = { now: 1_750_000_000_000 };
      const sender = senderAt(clock, fake.settings);
      const to = { chatId: OPS_GROUP, threadId: null };
      await sender.send(to, 'one', 'k1');
      clock.now += 7200_000 - TOKEN_MARGIN_MS - 1000;
      await sender.send(to, 'two', 'k2');
      expect(fake.tokenRequests).toBe(1);
      clock.now += 2000;
      await sender.send(to, 'three', 'k3');
      expect(fake.sends.map((request) => request.headers['x-acs-dingtalk-access-token'])).toEqual([
        'd1b2c3TESTappToken0001',
        'd1b2c3TESTappToken0001',
        'd1b2c3TESTappToken0002',
      ]);
    });

    it('renews the token exactly once after a 401 and sends the part once more', async () => {
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'first');
      fake.revokeTokens();
      await delivery.deliver(target, 'second');
      expect(fake.tokenRequests).toBe(2);
      expect(fake.callsTo(GROUP_SEND_PATH)).toHaveLength(3);
      expect(fake.delivered).toEqual(['first', 'second']);
      expect(timer.waits).toEqual([]);
    });

    it('names the app credentials when a fresh token is refused too, after one renewal', async () => {
      fake.acceptsTokens = false;
      const { delivery, target } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'never'));
      expect((error as Error).message).toBe(
        `dingtalk refused the credentials (HTTP 401: InvalidAuthentication: 不合法的access_token); ${APP_CREDENTIALS_TO_CHECK}`,
      );
      expect(fake.tokenRequests).toBe(2);
      expect(fake.callsTo(GROUP_SEND_PATH)).toHaveLength(2);
    });

    it('names the client id and secret, never the secret, when the token request is refused', async () => {
      const wrongSecret = 'wrongClientSecret000';
      const error = await failureOf(
        deliveryOver(fake, { client_secret: wrongSecret }).delivery.deliver(targetOf(`dingtalk:${OPS_GROUP}`), 'x'),
      );
      expect((error as Error).message).toBe(
        `dingtalk refused the credentials (HTTP 400: invalidClientIdOrSecret: 无效的clientId或者clientSecret); ${APP_CREDENTIALS_TO_CHECK}`,
      );
      expect((error as Error).message).not.toContain(wrongSecret);
      expect(fake.callsTo(GROUP_SEND_PATH)).toHaveLength(0);
    });

    it('counts an unavailable token endpoint as DingTalk unavailable', async () => {
      fake.failTokenRequests({
        status: 500,
        json: { code: 'ServiceUnavailable', message: 'The request has failed due to a temporary failure of the server.' },
      });
      const error = await failureOf(senderAt({ now: 0 }, fake.settings).send({ chatId: OPS_GROUP, threadId: null }, 'x', 'k'));
      expect(error).toBeInstanceOf(PlatformSendError);
      expect(error).toMatchObject({
        kind: 'unavailable',
        message: 'dingtalk is unavailable (HTTP 500: ServiceUnavailable: The request has failed due to a temporary failure of the server.)',
      });
    });

    it("refuses at once, in DingTalk's words, a group the robot is not in", async () => {
      const { delivery, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(targetOf('dingtalk:cidNotAGroupOfThisRobot=='), 'x'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toBe(
        'dingtalk refused the message (HTTP 400: invalid.openConversationId: openConversationId不合法)',
      );
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('does not count a 200 without a processQueryKey as delivered', async () => {
      fake.answerNextSendWith({ status: 200, json: {} });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf(`dingtalk:${OPS_GROUP}`), 'maybe'));
      expect((error as Error).message).toBe('dingtalk answered HTTP 200 without confirming the message ({})');
      expect(fake.delivered).toEqual([]);
    });

    it('waits and retries when the gateway throttles with a 4xx code', async () => {
      fake.answerNextSendWith({ status: 403, json: { code: 'Forbidden.AccessDenied.QpsLimitForApi', message: 'qps exceeds limit' } });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'slowly');
      expect(timer.waits).toEqual([1000]);
      expect(fake.delivered).toEqual(['slowly']);
    });

    it('never shows the app token, even when DingTalk quotes it', async () => {
      fake.answerNextSendWith({
        status: 400,
        json: { code: 'invalidParameter.param.invalid', message: 'bad header d1b2c3TESTappToken0001' },
      });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf(`dingtalk:${OPS_GROUP}`), 'x'));
      expect((error as Error).message).toBe('dingtalk refused the message (HTTP 400: invalidParameter.param.invalid: bad header ***)');
    });

    it('refuses dingtalk:webhook at preflight when no robot webhook is set', () => {
      expect(deliveryOver(fake).delivery.problemWith(targetOf('dingtalk:webhook'))).toBe(
        'Delivery target "dingtalk:webhook" cannot be delivered: "webhook" is the group of a robot webhook, and platforms.dingtalk.webhook_url (or DINGTALK_WEBHOOK_URL) is not set',
      );
    });
  });

  describe('over a robot webhook', () => {
    beforeEach(async () => {
      fake = await FakeDingTalkServer.start('webhook');
    });

    it('posts a text message to the webhook, signed with the timestamp and the HMAC of timestamp and secret', async () => {
      const clock = { now: 1_750_000_123_456 };
      const sent = await senderAt(clock, fake.settings).send(
        { chatId: 'webhook', threadId: null },
        'Nightly build passed.',
        '000000000001.1',
      );
      const [send] = fake.sends;
      expect(send!.method).toBe('POST');
      expect(send!.path).toBe(WEBHOOK_PATH);
      const expectedSign = createHmac('sha256', DINGTALK_SIGNING_SECRET)
        .update(`1750000123456\n${DINGTALK_SIGNING_SECRET}`)
        .digest('base64');
      expect(Object.fromEntries(send!.query)).toEqual({
        access_token: DINGTALK_WEBHOOK_TOKEN,
        timestamp: '1750000123456',
        sign: expectedSign,
      });
      expect(send!.body).toEqual({ msgtype: 'text', text: { content: 'Nightly build passed.' } });
      expect(sent).toEqual({ messageId: '000000000001.1' });
    });

    it('posts without timestamp and sign when no secret is set', async () => {
      fake.signs = false;
      await deliveryOver(fake).delivery.deliver(HOME, 'unsigned');
      expect(Object.fromEntries(fake.sends[0]!.query)).toEqual({ access_token: DINGTALK_WEBHOOK_TOKEN });
    });

    it("delivers to the robot's group as the home channel, with webhook_url as the only setting", async () => {
      fake.signs = false;
      const { platforms, delivery } = deliveryOver(fake);
      expect(platforms.status('dingtalk')).toMatchObject({ configured: true, missing: [], homeChannel: 'webhook' });
      await delivery.deliver(HOME, 'home');
      expect(fake.delivered).toEqual(['home']);
    });

    it('refuses any other destination at preflight, before anything is sent', async () => {
      const { delivery } = deliveryOver(fake);
      const target = targetOf(`dingtalk:${OPS_GROUP}`);
      expect(delivery.problemWith(target)).toBe(
        `Delivery target "dingtalk:${OPS_GROUP}" cannot be delivered: dingtalk has only a robot webhook, which posts to its own group (the home channel "webhook"); ` +
          `set platforms.dingtalk.client_id (or DINGTALK_CLIENT_ID) and platforms.dingtalk.client_secret (or DINGTALK_CLIENT_SECRET) to reach group "${OPS_GROUP}"`,
      );
      expect(await failureOf(delivery.deliver(target, 'x'))).toBeInstanceOf(DeliveryError);
      expect(fake.requests).toEqual([]);
    });

    it("takes a home_channel as the name of the robot's group", async () => {
      const { delivery, platforms } = deliveryOver(fake, { home_channel: 'ops-robot' });
      expect(platforms.status('dingtalk')!.homeChannel).toBe('ops-robot');
      await delivery.deliver(HOME, 'home');
      await delivery.deliver(targetOf('dingtalk:ops-robot'), 'by name');
      expect(delivery.problemWith(targetOf('dingtalk:webhook'))).toMatch(/dingtalk has only a robot webhook/);
      expect(fake.delivered).toEqual(['home', 'by name']);
    });

    it.each([
      [130101, 'send too fast, exceed 20 times per minute', 'rate_limited'],
      [410100, '发送速度太快而限流', 'rate_limited'],
      [-1, '系统繁忙', 'unavailable'],
      [400102, '机器人已停用', 'refused'],
    ])('does not count errcode %s in a 200 as delivered', async (errcode, errmsg, kind) => {
      fake.answerNextSendWith({ status: 200, json: { errcode, errmsg } });
      const error = await failureOf(senderAt({ now: Date.now() }, fake.settings).send({ chatId: 'webhook', threadId: null }, 'x', 'k'));
      expect(error).toBeInstanceOf(PlatformSendError);
      expect(error).toMatchObject({ kind });
      expect((error as Error).message).toContain(`(${errcode}: ${errmsg})`);
      expect(fake.delivered).toEqual([]);
    });

    it('names the webhook and secret, never their values, when the signature does not match', async () => {
      const wrongSecret = 'SECwrongSigningSecret0000';
      const error = await failureOf(deliveryOver(fake, { secret: wrongSecret }).delivery.deliver(HOME, 'x'));
      expect((error as Error).message).toBe(
        'dingtalk refused the credentials (310000: sign not match, more: [https://ding-doc.dingtalk.com/doc#/serverapi2/qf2nxq]); ' +
          'check platforms.dingtalk.webhook_url (or DINGTALK_WEBHOOK_URL) and platforms.dingtalk.secret (or DINGTALK_SECRET)',
      );
      expect((error as Error).message).not.toContain(wrongSecret);
      expect(fake.attempts).toBe(1);
    });

    it("points at the robot's security settings when a keyword is missing", async () => {
      fake.answerNextSendWith({ status: 200, json: { errcode: 310000, errmsg: 'keywords not in content' } });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(HOME, 'x'));
      expect((error as Error).message).toBe(
        "dingtalk refused the message (310000: keywords not in content); check the robot's security settings (keywords the text must contain, allowed IP addresses)",
      );
    });

    it("never shows the webhook's access token, even when DingTalk quotes it alone", async () => {
      fake.answerNextSendWith({ status: 200, json: { errcode: 400101, errmsg: `access_token ${DINGTALK_WEBHOOK_TOKEN} 不存在` } });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(HOME, 'x'));
      expect((error as Error).message).toContain(
        'dingtalk refused the credentials (400101: access_token *** 不存在); check platforms.dingtalk.webhook_url',
      );
      expect((error as Error).message).not.toContain(DINGTALK_WEBHOOK_TOKEN);
    });
  });

  describe('with both the app credentials and a robot webhook', () => {
    beforeEach(async () => {
      fake = await FakeDingTalkServer.start('open_api');
    });

    it("sends dingtalk (the webhook's group) through the webhook and other groups through the open API", async () => {
      fake.signs = false;
      const { delivery, platforms } = deliveryOver(fake, { webhook_url: fake.webhookUrl, home_channel: '' });
      expect(platforms.status('dingtalk')).toMatchObject({ configured: true, homeChannel: 'webhook' });
      await delivery.deliver(HOME, 'to the robot group');
      await delivery.deliver(targetOf(`dingtalk:${HOME_GROUP}`), 'to a group by id');
      expect(fake.sends.map((request) => request.path)).toEqual([WEBHOOK_PATH, GROUP_SEND_PATH]);
      expect(fake.messages.map((message) => [message.way, message.group])).toEqual([
        ['webhook', 'webhook'],
        ['open_api', HOME_GROUP],
      ]);
    });
  });
});
