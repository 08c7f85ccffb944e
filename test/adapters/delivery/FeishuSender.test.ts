import { TOKEN_MARGIN_MS } from '../../../src/adapters/delivery/accessTokenCache.js';
import { feishuAddressProblem, feishuApiRootOf } from '../../../src/adapters/delivery/platformAddressing.js';
import { FeishuSender } from '../../../src/adapters/delivery/FeishuSender.js';
import { PLATFORM_SPECS } from '../../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { PlatformSendError } from '../../../src/application/ports/PlatformSender.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver, longAnswer } from '../../contract/PlatformSender.contract.js';
import { FakeFeishuServer, FEISHU_APP_ID, FEISHU_APP_SECRET } from '../../support/platforms/FakeFeishuServer.js';

const targetOf = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;
const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'delivered',
    (caught: unknown) => caught,
  );

const GROUP = 'oc_5ad11d72b830411d72b836c20';
const PERSON = 'ou_7d8a6e6df7621556ce0d21922b676706';
const THREAD_MESSAGE = 'om_dc13264520392913993dd051dba21dcf';
const TOKEN_PATH = '/open-apis/auth/v3/tenant_access_token/internal';
const SEND_PATH = '/open-apis/im/v1/messages';
const CREDENTIALS_TO_CHECK = 'check platforms.feishu.app_id (or FEISHU_APP_ID) and platforms.feishu.app_secret (or FEISHU_APP_SECRET)';

describe('FeishuSender', () => {
  let fake: FakeFeishuServer;
  beforeEach(async () => {
    fake = await FakeFeishuServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  /** A sender over the fake whose clock the test moves. */
  const senderAt = (clock: { now: number }, extraSettings: Record<string, string> = {}) =>
    new FeishuSender(platformSettings('feishu', { ...fake.settings, ...extraSettings }, {}, { ...PLATFORM_SPECS.feishu!.defaults }), {
      now: () => clock.now,
    });
  const sendsTo = (path: string) => fake.requests.filter((request) => request.path === path);

  describe('sending', () => {
    it('asks for a tenant token with the app id and secret, then posts a text message to the chat with it', async () => {
      const { delivery, target } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'Nightly build passed.');
      const [tokenRequest] = fake.callsTo(TOKEN_PATH);
      expect(tokenRequest!.method).toBe('POST');
      expect(tokenRequest!.headers['content-type']).toMatch(/^application\/json/);
      expect(tokenRequest!.body).toEqual({ app_id: FEISHU_APP_ID, app_secret: FEISHU_APP_SECRET });
      const [send] = fake.sends;
      expect(send!.method).toBe('POST');
      expect(send!.path).toBe(SEND_PATH);
      expect(send!.query.get('receive_id_type')).toBe('chat_id');
      expect(send!.headers.authorization).toBe('Bearer t-g10440001FAKEtenantToken');
      expect(send!.body).toEqual({
        receive_id: GROUP,
        msg_type: 'text',
        content: '{"text":"Nightly build passed."}',
        uuid: '000000000001.1',
      });
      expect(receipt.messageIds).toEqual([fake.messages[0]!.messageId]);
      expect(receipt.messageIds[0]).toMatch(/^om_/);
    });

    it.each([
      [PERSON, 'open_id'],
      ['on_94a1ee5551019f18cd73d9f111898cf2', 'union_id'],
    ])('sends to the person %s by %s', async (person, receiveIdType) => {
      await deliveryOver(fake).delivery.deliver(targetOf(`feishu:${person}`), 'just for you');
      expect(fake.sends[0]!.query.get('receive_id_type')).toBe(receiveIdType);
      expect(fake.sends[0]!.body.receive_id).toBe(person);
    });

    it('replies in the thread of the message a target names, with reply_in_thread', async () => {
      await deliveryOver(fake).delivery.deliver(targetOf(`feishu:${GROUP}:${THREAD_MESSAGE}`), 'in the thread');
      const [send] = fake.sends;
      expect(send!.path).toBe(`${SEND_PATH}/${THREAD_MESSAGE}/reply`);
      expect(send!.body).toEqual({ msg_type: 'text', content: '{"text":"in the thread"}', uuid: '000000000001.1', reply_in_thread: true });
      expect(fake.messages[0]).toMatchObject({ to: THREAD_MESSAGE, replyInThread: true });
    });

    it('keeps the text as written, quotes and newlines included, inside the JSON content', async () => {
      const text = 'He said "ship it"\n\n```sh\nnpm test\n```';
      await deliveryOver(fake).delivery.deliver(targetOf(`feishu:${GROUP}`), text);
      expect(JSON.parse(fake.sends[0]!.body.content)).toEqual({ text });
      expect(fake.delivered).toEqual([text]);
    });

    it('stores a part once when its answer was lost and the retry carries the same uuid', async () => {
      fake.loseAnswers(1);
      const { delivery, target, timer } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'exactly once');
      expect(sendsTo(SEND_PATH).map((request) => request.body.uuid)).toEqual(['000000000001.1', '000000000001.1']);
      expect(timer.waits).toEqual([1000]);
      expect(fake.messages).toHaveLength(1);
      expect(receipt.messageIds).toEqual([fake.messages[0]!.messageId]);
    });
  });

  describe('the tenant access token', () => {
    it('is asked for once and used for every part and every later delivery', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, longAnswer(20_000));
      await delivery.deliver(target, 'and another');
      expect(fake.sends.length).toBeGreaterThanOrEqual(4);
      expect(fake.tokenRequests).toBe(1);
      expect(new Set(fake.sends.map((request) => request.headers.authorization))).toEqual(new Set(['Bearer t-g10440001FAKEtenantToken']));
    });

    it('is kept until shortly before the expire Feishu gave, then asked for again', async () => {
      fake.expireSeconds = 7200;
      const clock = { now: 1_750_000_000_000 };
      const sender = senderAt(clock);
      const to = { chatId: GROUP, threadId: null };
      await sender.send(to, 'one', 'k1');
      clock.now += 7200_000 - TOKEN_MARGIN_MS - 1000;
      await sender.send(to, 'two', 'k2');
      expect(fake.tokenRequests).toBe(1);
      clock.now += 2000;
      await sender.send(to, 'three', 'k3');
      expect(fake.tokenRequests).toBe(2);
      expect(fake.sends.map((request) => request.headers.authorization)).toEqual([
        'Bearer t-g10440001FAKEtenantToken',
        'Bearer t-g10440001FAKEtenantToken',
        'Bearer t-g10440002FAKEtenantToken',
      ]);
    });

    it('is renewed exactly once when Feishu says it is invalid, and the part is sent once more', async () => {
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'first');
      fake.revokeTokens();
      await delivery.deliver(target, 'second');
      expect(fake.tokenRequests).toBe(2);
      expect(sendsTo(SEND_PATH).map((request) => request.headers.authorization)).toEqual([
        'Bearer t-g10440001FAKEtenantToken',
        'Bearer t-g10440001FAKEtenantToken',
        'Bearer t-g10440002FAKEtenantToken',
      ]);
      expect(fake.delivered).toEqual(['first', 'second']);
      expect(timer.waits).toEqual([]);
    });

    it('is renewed only once: a fresh token refused too names the credentials and stops', async () => {
      fake.acceptsTokens = false;
      const { delivery, target, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'never'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toBe(
        `feishu refused the credentials (99991663: Invalid access token for authorization. Please make a request with token attached.); ${CREDENTIALS_TO_CHECK}`,
      );
      expect(fake.tokenRequests).toBe(2);
      expect(sendsTo(SEND_PATH)).toHaveLength(2);
      expect(timer.waits).toEqual([]);
    });

    it('names the app id and secret, never the secret itself, when Feishu refuses them', async () => {
      const wrongSecret = 'wrongSecretValue0000';
      const { delivery, target } = deliveryOver(fake, { app_secret: wrongSecret });
      const error = await failureOf(delivery.deliver(target, 'who am I'));
      expect((error as Error).message).toBe(`feishu refused the credentials (10014: app secret invalid); ${CREDENTIALS_TO_CHECK}`);
      expect((error as Error).message).not.toContain(wrongSecret);
      expect(sendsTo(SEND_PATH)).toHaveLength(0);
    });

    it('counts an unavailable token endpoint as Feishu unavailable, retried like a send', async () => {
      fake.failTokenRequests({ status: 503, text: '<html><body>503 Service Temporarily Unavailable</body></html>' });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'after the outage');
      expect(timer.waits).toEqual([1000]);
      expect(fake.tokenRequests).toBe(2);
      expect(fake.delivered).toEqual(['after the outage']);
    });

    it('reports an unavailable token endpoint as unavailable in its own words', async () => {
      fake.failTokenRequests({ status: 502, text: 'Bad Gateway' });
      const error = await failureOf(senderAt({ now: 0 }).send({ chatId: GROUP, threadId: null }, 'x', 'k'));
      expect(error).toBeInstanceOf(PlatformSendError);
      expect(error).toMatchObject({ kind: 'unavailable', message: 'feishu is unavailable (HTTP 502: Bad Gateway)' });
    });

    it('is never shown in an error, even when Feishu quotes it', async () => {
      fake.answerNextSendWith({ status: 400, json: { code: 230001, msg: 'invalid header Bearer t-g10440001FAKEtenantToken' } });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf(`feishu:${GROUP}`), 'x'));
      expect((error as Error).message).toBe('feishu refused the message (HTTP 400: 230001: invalid header Bearer ***)');
    });
  });

  describe("Feishu's error answers", () => {
    it('does not count a 200 carrying an error code as delivered, and says the code and message', async () => {
      fake.answerNextSendWith({
        status: 200,
        json: { code: 232009, msg: 'Your request specified a chat that has been disbanded.', data: {} },
      });
      const { delivery, target, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'lost'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toBe('feishu refused the message (232009: Your request specified a chat that has been disbanded.)');
      expect(fake.delivered).toEqual([]);
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it("refuses a chat the bot is not in, in Feishu's words, without retrying", async () => {
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf('feishu:oc_not0in0this0chat000000000'), 'x'));
      expect((error as Error).message).toBe('feishu refused the message (HTTP 400: 230002: Bot/User can NOT be out of the chat.)');
      expect(fake.attempts).toBe(1);
    });

    it('does not count code 0 without a message id as delivered', async () => {
      fake.answerNextSendWith({ status: 200, json: { code: 0, msg: 'success', data: {} } });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf(`feishu:${GROUP}`), 'maybe'));
      expect((error as Error).message).toBe(
        'feishu answered HTTP 200 without confirming the message ({"code":0,"msg":"success","data":{}})',
      );
    });

    it.each([
      [
        'a 429 with x-ogw-ratelimit-reset',
        { status: 429, headers: { 'x-ogw-ratelimit-reset': '9' }, json: { code: 99991400, msg: 'request trigger frequency limit' } },
        9000,
      ],
      [
        "an older API's 400 with 99991400",
        { status: 400, headers: { 'x-ogw-ratelimit-reset': '4' }, json: { code: 99991400, msg: 'request trigger frequency limit' } },
        4000,
      ],
    ])('waits the reset Feishu names after %s', async (_, answer, wait) => {
      fake.answerNextSendWith(answer);
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'slowly');
      expect(timer.waits).toEqual([wait]);
      expect(fake.delivered).toEqual(['slowly']);
    });

    it('speaks of the credentials check, not of a message, when the bot info answers 200 with an error code', async () => {
      fake.answerNextRequest((request) => request.path === '/open-apis/bot/v3/info', {
        status: 200,
        json: { code: 1000, msg: 'bot disabled' },
      });
      const error = await failureOf(senderAt({ now: 0 }).whoAmI());
      expect(error).toMatchObject({ kind: 'refused', message: 'feishu refused the credentials check (1000: bot disabled)' });
      expect(fake.delivered).toEqual([]);
    });

    it('treats the per-chat send limit (230020) as a rate limit', async () => {
      fake.answerNextSendWith({ status: 400, json: { code: 230020, msg: 'This operation triggers the frequency limit.' } });
      const error = await failureOf(senderAt({ now: 0 }).send({ chatId: GROUP, threadId: null }, 'x', 'k'));
      expect(error).toMatchObject({
        kind: 'rate_limited',
        message: 'feishu is rate-limiting (HTTP 400: 230020: This operation triggers the frequency limit.)',
      });
    });
  });

  describe('destinations Feishu cannot address', () => {
    it.each([
      [
        'feishu:a1b2c3d4',
        'feishu addresses a group chat by its chat id (oc_…) and a person by open id (ou_…) or union id (on_…), not "a1b2c3d4"',
      ],
      [`feishu:${GROUP}:omt_1a3b5c7d9e`, 'a feishu thread is named by the message id (om_…) of a message in it, not "omt_1a3b5c7d9e"'],
    ])('refuses %s before sending anything', async (target, why) => {
      const { delivery } = deliveryOver(fake);
      expect(delivery.problemWith(targetOf(target))).toBe(`Delivery target "${target}" cannot be delivered: ${why}`);
      const error = await failureOf(delivery.deliver(targetOf(target), 'x'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect(fake.requests).toEqual([]);
    });

    it('refuses a home channel it cannot address the same way', async () => {
      const { delivery } = deliveryOver(fake, { home_channel: 'general' });
      const bare = { kind: 'platform', platform: 'feishu', destination: null, threadId: null } as const;
      expect(delivery.problemWith(bare)).toMatch(/^Delivery target "feishu:general" cannot be delivered: feishu addresses a group chat/);
    });
  });

  describe('the API root', () => {
    const rootOf = (section: Record<string, string>) =>
      feishuApiRootOf(platformSettings('feishu', section, {}, { ...PLATFORM_SPECS.feishu!.defaults }));

    it('is open.feishu.cn by default, open.larksuite.com for domain lark, and base_url when set', () => {
      expect(rootOf({})).toBe('https://open.feishu.cn');
      expect(rootOf({ domain: 'lark' })).toBe('https://open.larksuite.com');
      expect(rootOf({ domain: 'Lark' })).toBe('https://open.larksuite.com');
      expect(rootOf({ domain: 'lark', base_url: 'http://127.0.0.1:9' })).toBe('http://127.0.0.1:9');
    });

    it('refuses a domain that is neither at preflight, naming the setting and its variable', () => {
      const settings = platformSettings('feishu', {}, { FEISHU_DOMAIN: 'larksuite' }, { ...PLATFORM_SPECS.feishu!.defaults });
      expect(feishuAddressProblem({ chatId: GROUP, threadId: null }, settings)).toBe(
        'platforms.feishu.domain (or FEISHU_DOMAIN) is "larksuite"; use feishu (open.feishu.cn) or lark (open.larksuite.com)',
      );
    });
  });
});
