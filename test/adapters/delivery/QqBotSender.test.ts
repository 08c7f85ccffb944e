import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { PlatformSendError, type PlatformSender } from '../../../src/application/ports/PlatformSender.js';
import { ConfiguredPlatforms } from '../../../src/adapters/delivery/ConfiguredPlatforms.js';
import { PLATFORM_SPECS } from '../../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { QqBotSender } from '../../../src/adapters/delivery/QqBotSender.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver } from '../../contract/PlatformSender.contract.js';
import {
  FakeQqBotServer,
  QQ_CHANNEL,
  QQ_GROUP,
  QQ_USER,
  QQBOT_APP_ID,
  QQBOT_CLIENT_SECRET,
} from '../../support/platforms/FakeQqBotServer.js';

const targetOf = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;
const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'delivered',
    (caught: unknown) => caught,
  );
const CREDENTIALS_HINT = 'check platforms.qqbot.app_id (or QQBOT_APP_ID) and platforms.qqbot.client_secret (or QQBOT_CLIENT_SECRET)';
const GROUP = { chatId: QQ_GROUP, threadId: null };

describe('QqBotSender', () => {
  let fake: FakeQqBotServer;
  beforeEach(async () => {
    fake = await FakeQqBotServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  const senderOver = (extraSettings: Record<string, string> = {}): Promise<PlatformSender> =>
    deliveryOver(fake, extraSettings).platforms.sender('qqbot');
  /** A sender on its own, reading time from `clock`. */
  const senderAt = (clock: { now: number }): PlatformSender =>
    new QqBotSender(platformSettings('qqbot', fake.settings, {}, { ...PLATFORM_SPECS.qqbot!.defaults }), () => clock.now);

  describe('posting', () => {
    it('gets an app access token with the app id and secret, then posts a text message to the group with it', async () => {
      const { delivery, target } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'Nightly build passed.');
      const [tokenRequest, send] = fake.requests;
      expect(tokenRequest!.method).toBe('POST');
      expect(tokenRequest!.path).toBe('/app/getAppAccessToken');
      expect(tokenRequest!.headers['content-type']).toMatch(/^application\/json/);
      expect(tokenRequest!.body).toEqual({ appId: QQBOT_APP_ID, clientSecret: QQBOT_CLIENT_SECRET });
      expect(send!.method).toBe('POST');
      expect(send!.path).toBe(`/v2/groups/${QQ_GROUP}/messages`);
      expect(send!.headers.authorization).toMatch(/^QQBot qq-access-token-1-/);
      expect(send!.headers['content-type']).toMatch(/^application\/json/);
      expect(send!.body).toEqual({ content: 'Nightly build passed.', msg_type: 0 });
      expect(receipt.messageIds).toEqual(['ROBOT1.0_fakeMessage1']);
    });

    it('posts to a user for user:<openid>', async () => {
      await deliveryOver(fake).delivery.deliver(targetOf(`qqbot:user:${QQ_USER}`), 'just for you');
      expect(fake.sends[0]!.path).toBe(`/v2/users/${QQ_USER}/messages`);
      expect(fake.sends[0]!.body).toEqual({ content: 'just for you', msg_type: 0 });
    });

    it('posts plain content to a guild sub-channel for channel:<channel_id> and keeps the Message id', async () => {
      const receipt = await deliveryOver(fake).delivery.deliver(targetOf(`qqbot:channel:${QQ_CHANNEL}`), 'to the channel');
      expect(fake.sends[0]!.path).toBe(`/channels/${QQ_CHANNEL}/messages`);
      expect(fake.sends[0]!.body).toEqual({ content: 'to the channel' });
      expect(receipt.messageIds).toEqual(['ROBOT1.0_fakeMessage1']);
    });

    it('takes group:<group_openid> as the bare id does', async () => {
      await deliveryOver(fake).delivery.deliver(targetOf(`qqbot:group:${QQ_GROUP}`), 'explicit');
      expect(fake.sends[0]!.path).toBe(`/v2/groups/${QQ_GROUP}/messages`);
    });

    it('delivers the bare platform name to a home channel in the channel: form', async () => {
      await deliveryOver(fake).delivery.deliver(targetOf('qqbot'), 'home');
      expect(fake.sends[0]!.path).toBe(`/channels/${QQ_CHANNEL}/messages`);
    });
  });

  describe('the app access token', () => {
    it('is asked for once and reused by later deliveries', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, 'one');
      await delivery.deliver(targetOf(`qqbot:user:${QQ_USER}`), 'two');
      await delivery.deliver(targetOf(`qqbot:channel:${QQ_CHANNEL}`), 'three');
      expect(fake.tokenRequests).toBe(1);
      expect(new Set(fake.authorizationsUsed).size).toBe(1);
    });

    it('reads expires_in given as text ("7200") and renews the token in its last minute, not before', async () => {
      const clock = { now: Date.parse('2024-04-05T08:00:00Z') };
      const sender = senderAt(clock);
      await sender.send(GROUP, 'first', 'k1');
      clock.now += (7200 - 61) * 1000;
      await sender.send(GROUP, 'second', 'k2');
      expect(fake.tokenRequests).toBe(1);
      clock.now += 2000;
      await sender.send(GROUP, 'third', 'k3');
      expect(fake.tokenRequests).toBe(2);
      expect(fake.authorizationsUsed[2]).toMatch(/^QQBot qq-access-token-2-/);
    });

    it('reads expires_in given as a number as well', async () => {
      fake.tokenLifetime = 300;
      const clock = { now: 0 };
      const sender = senderAt(clock);
      await sender.send(GROUP, 'first', 'k1');
      clock.now += 239_000;
      await sender.send(GROUP, 'second', 'k2');
      clock.now += 2_000;
      await sender.send(GROUP, 'third', 'k3');
      expect(fake.tokenRequests).toBe(2);
    });

    it('gets exactly one new token when QQ answers 401 "token not exist or expire", and sends the part once more', async () => {
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'before');
      fake.expireTokens();
      await delivery.deliver(target, 'after expiry');
      expect(fake.tokenRequests).toBe(2);
      expect(fake.attempts).toBe(3);
      expect(fake.delivered).toEqual(['before', 'after expiry']);
      expect(fake.authorizationsUsed[2]).not.toBe(fake.authorizationsUsed[1]);
      expect(timer.waits).toEqual([]);
    });

    it('refreshes on code 11244 in the body whatever the status', async () => {
      fake.answerNextSendWith({ status: 200, json: { message: 'token not exist or expire', code: 11244 } });
      await deliveryOver(fake).delivery.deliver(targetOf(fake.target), 'second try');
      expect(fake.tokenRequests).toBe(2);
      expect(fake.delivered).toEqual(['second try']);
    });

    it('refreshes once only: a new token refused as well fails the part naming the credentials', async () => {
      const expired = { status: 401, json: { message: 'token not exist or expire', code: 11244, err_code: 11244, trace_id: 't-1' } };
      fake.answerNextSendWith(expired);
      fake.answerNextSendWith(expired);
      const { delivery, target, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'no luck'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toBe(
        `qqbot refused the credentials (a new access token was refused too, code 11244: token not exist or expire (trace_id t-1)); ${CREDENTIALS_HINT}`,
      );
      expect(fake.tokenRequests).toBe(2);
      expect(fake.attempts).toBe(2);
      expect(timer.waits).toEqual([]);
    });

    it('names app_id and client_secret when the token endpoint refuses them in a 200 answer, without printing the secret', async () => {
      const wrongSecret = 'WRONGqqClientSecret00000000';
      const { delivery, target } = deliveryOver(fake, { client_secret: wrongSecret });
      const error = await failureOf(delivery.deliver(target, 'who am I'));
      expect((error as Error).message).toBe(
        `qqbot refused the credentials (HTTP 200: code 100016: invalid appid or secret); ${CREDENTIALS_HINT}`,
      );
      expect((error as Error).message).not.toContain(wrongSecret);
      expect(fake.attempts).toBe(0);
    });

    it('names the credentials for an app id QQ does not know (100007)', async () => {
      const error = await failureOf(deliveryOver(fake, { app_id: '999' }).delivery.deliver(targetOf(fake.target), 'x'));
      expect((error as Error).message).toBe(`qqbot refused the credentials (HTTP 200: code 100007: appid invalid); ${CREDENTIALS_HINT}`);
    });

    it('is unavailable while the token endpoint answers 5xx, and the delivery backs off and tries again', async () => {
      fake.tokenFailures.push({ status: 503, text: 'Service Unavailable' });
      const error = await failureOf(senderOver().then((sender) => sender.send(GROUP, 'x', 'k')));
      expect(error).toMatchObject({ kind: 'unavailable', message: 'qqbot is unavailable (HTTP 503: Service Unavailable)' });

      fake.tokenFailures.push({ status: 502, text: 'Bad Gateway' });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'eventually');
      expect(timer.waits).toEqual([1000]);
      expect(fake.delivered).toEqual(['eventually']);
    });

    it('is rate-limited when the token endpoint says requests are too frequent (100001)', async () => {
      fake.tokenFailures.push({ status: 200, json: { code: 100001, message: 'Too many requests' } });
      const error = await failureOf(senderOver().then((sender) => sender.send(GROUP, 'x', 'k')));
      expect(error).toMatchObject({
        kind: 'rate_limited',
        message: 'qqbot is rate-limiting token requests (code 100001: Too many requests)',
      });
    });

    it('refuses a token answer without a token', async () => {
      fake.tokenFailures.push({ status: 200, json: { expires_in: '7200' } });
      const error = await failureOf(senderOver().then((sender) => sender.send(GROUP, 'x', 'k')));
      expect(error).toMatchObject({
        kind: 'refused',
        message: 'qqbot answered the access token request without a token ({"expires_in":"7200"})',
      });
    });

    it('words a refused token request by what asked for it: a send, or the credentials check that sends nothing', async () => {
      const refusal = { status: 400, json: { code: 12002, message: 'request invalid' } };
      fake.tokenFailures.push(refusal);
      const sending = await failureOf(senderOver().then((sender) => sender.send(GROUP, 'x', 'k')));
      expect(sending).toMatchObject({ kind: 'refused', message: 'qqbot refused the message (HTTP 400: code 12002: request invalid)' });

      fake.tokenFailures.push(refusal);
      const checking = await failureOf(senderOver().then((sender) => sender.whoAmI!()));
      expect(checking).toMatchObject({
        kind: 'refused',
        message: 'qqbot refused the credentials check (HTTP 400: code 12002: request invalid)',
      });
      expect(fake.delivered).toEqual([]);
    });
  });

  describe("QQ's answers", () => {
    it('does not count a 2xx without a message id as delivered', async () => {
      fake.answerNextSendWith({ status: 200, json: { timestamp: 1712299545 } });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf(fake.target), 'maybe'));
      expect((error as Error).message).toBe('qqbot answered HTTP 200 without confirming the message ({"timestamp":1712299545})');
      expect(fake.delivered).toEqual([]);
    });

    it('does not count a message held for review as delivered, and does not send it again', async () => {
      fake.answerNextSendWith({
        status: 202,
        json: { code: 304023, message: 'push message is waiting for audit now', data: { message_audit: { audit_id: 'a-1' } } },
      });
      const { delivery, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(targetOf(`qqbot:channel:${QQ_CHANNEL}`), 'pending'));
      expect((error as Error).message).toBe(
        'qqbot holds the message for review (code 304023: push message is waiting for audit now); it is not counted as delivered',
      );
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it("fails at once on a refusal, in QQ's words with its trace id", async () => {
      fake.failNext({ failure: 'refused' });
      const { delivery, target, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'see https://example.com'));
      expect((error as Error).message).toBe(
        'qqbot refused the message (HTTP 400: code 304003: url not allowed (trace_id fake-trace-0001))',
      );
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('refuses a destination QQ does not know', async () => {
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf('qqbot:channel:42'), 'x'));
      expect((error as Error).message).toBe('qqbot refused the message (HTTP 400: code 10003: unknown channel (trace_id fake-trace-0001))');
    });

    it('waits the Retry-After of a 429 when QQ gives one', async () => {
      fake.answerNextSendWith({
        status: 429,
        headers: { 'retry-after': '5' },
        json: { code: 20028, message: 'channel hit write rate limit' },
      });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'slowly');
      expect(timer.waits).toEqual([5000]);
      expect(fake.delivered).toEqual(['slowly']);
    });

    it('treats a sub-channel write limit (20028) as rate limiting whatever the status', async () => {
      fake.answerNextSendWith({ status: 400, json: { code: 20028, message: 'channel hit write rate limit' } });
      const error = await failureOf(senderOver().then((sender) => sender.send(GROUP, 'x', 'k')));
      expect(error).toMatchObject({
        kind: 'rate_limited',
        message: 'qqbot is rate-limiting (HTTP 400: code 20028: channel hit write rate limit)',
      });
    });

    it('retries the codes QQ calls system errors worth one more try (11242)', async () => {
      fake.answerNextSendWith({ status: 400, json: { code: 11242, message: 'check token failed' } });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'again');
      expect(timer.waits).toEqual([1000]);
      expect(fake.delivered).toEqual(['again']);
    });

    it('reports a 5xx as QQ being unavailable', async () => {
      fake.failNext({ failure: 'unavailable' });
      const error = await failureOf(senderOver().then((sender) => sender.send(GROUP, 'x', 'k')));
      expect(error).toBeInstanceOf(PlatformSendError);
      expect(error).toMatchObject({
        kind: 'unavailable',
        message: 'qqbot is unavailable (HTTP 500: code 1100300: internal error (trace_id fake-trace-0001))',
      });
    });
  });

  describe('destinations QQ cannot address', () => {
    it.each([
      ['qqbot:dm:12345', '"dm:" is not a QQ destination'],
      ['qqbot:channel:general', 'a channel_id is a number'],
      ['qqbot:user:', 'a user openid is letters and digits'],
      ['qqbot:group:has space', 'a group_openid is letters and digits'],
    ])('refuses %s before sending anything', async (text, why) => {
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf(text), 'hello'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toContain(`Delivery target "${text}" cannot be delivered: qqbot cannot address`);
      expect((error as Error).message).toContain(why);
      expect(fake.requests).toEqual([]);
    });

    it('refuses a thread instead of posting without it', async () => {
      const error = await failureOf(
        deliveryOver(fake).delivery.deliver({ kind: 'platform', platform: 'qqbot', destination: QQ_GROUP, threadId: '9' }, 'x'),
      );
      expect((error as Error).message).toBe(
        `Delivery target "qqbot:${QQ_GROUP}:9" cannot be delivered: qqbot has no threads; deliver to "${QQ_GROUP}" without thread "9"`,
      );
      expect(fake.requests).toEqual([]);
    });

    it('counts as configured with app_id and client_secret', () => {
      expect(deliveryOver(fake).platforms.status('qqbot')).toMatchObject({ configured: true, missing: [] });
      const platforms = new ConfiguredPlatforms({ qqbot: { app_id: QQBOT_APP_ID } }, {});
      expect(platforms.status('qqbot')).toMatchObject({
        configured: false,
        missing: [{ key: 'client_secret', variable: 'QQBOT_CLIENT_SECRET' }],
      });
    });
  });

  describe('secrets', () => {
    it('cuts the access token out of an error that quotes it', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, 'first');
      const token = fake.authorizationsUsed[0]!.slice('QQBot '.length);
      fake.answerNextSendWith({ status: 400, json: { code: 12002, message: `request invalid for token ${token}` } });
      const error = await failureOf(delivery.deliver(target, 'second'));
      expect((error as Error).message).toBe('qqbot refused the message (HTTP 400: code 12002: request invalid for token ***)');
    });
  });
});
