import { PLATFORM_SPECS } from '../../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { createSender } from '../../../src/adapters/delivery/WeixinSender.js';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { PlatformSendError, type ChatAddress } from '../../../src/application/ports/PlatformSender.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver } from '../../contract/PlatformSender.contract.js';
import { FakeWeixinServer, WEIXIN_HOME, WEIXIN_TOKEN, WEIXIN_USER } from '../../support/platforms/FakeWeixinServer.js';

const USER: ChatAddress = { chatId: WEIXIN_USER, threadId: null };
const targetOf = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;

describe('WeixinSender', () => {
  let fake: FakeWeixinServer;
  beforeEach(async () => {
    fake = await FakeWeixinServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  function senderWith(settings: Record<string, string> = {}) {
    return createSender(platformSettings('weixin', { ...fake.settings, ...settings }, {}, PLATFORM_SPECS.weixin!.defaults));
  }

  async function failureOf(promise: Promise<unknown>): Promise<PlatformSendError> {
    const error = await promise.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PlatformSendError);
    return error as PlatformSendError;
  }

  describe('the request iLink requires', () => {
    it('posts a finished bot message with one text item to /ilink/bot/sendmessage with the bot token', async () => {
      await senderWith().send(USER, 'The build is green.', '0a1b2c3d4e5f.1');

      const [send] = fake.sends;
      expect(send!.method).toBe('POST');
      expect(send!.path).toBe('/ilink/bot/sendmessage');
      expect(send!.headers.authorization).toBe(`Bearer ${WEIXIN_TOKEN}`);
      expect(send!.headers.authorizationtype).toBe('ilink_bot_token');
      expect(send!.headers['content-type']).toMatch(/^application\/json/);
      expect(send!.headers['ilink-app-id']).toBe('bot');
      expect(send!.headers['ilink-app-clientversion']).toBe(String((2 << 16) | (4 << 8) | 8));
      expect(send!.body).toEqual({
        msg: {
          from_user_id: '',
          to_user_id: WEIXIN_USER,
          client_id: 'agent-0a1b2c3d4e5f.1',
          message_type: 2,
          message_state: 2,
          item_list: [{ type: 1, text_item: { text: 'The build is green.' } }],
        },
        base_info: { channel_version: '2.4.8' },
      });
    });

    it('sends X-WECHAT-UIN as a random uint32 in decimal, base64-encoded, new for every request', async () => {
      const sender = senderWith();
      await sender.send(USER, 'one', 'k.1');
      await sender.send(USER, 'two', 'k.2');

      const uins = fake.sends.map((send) => String(send.headers['x-wechat-uin']));
      for (const uin of uins) {
        const decimal = Buffer.from(uin, 'base64').toString('utf8');
        expect(decimal).toMatch(/^\d{1,10}$/);
        expect(Number(decimal)).toBeLessThanOrEqual(0xffffffff);
      }
      expect(new Set(uins).size).toBe(2);
    });

    it('goes to https://ilinkai.weixin.qq.com unless base_url says otherwise', () => {
      expect(PLATFORM_SPECS.weixin!.defaults.base_url).toBe('https://ilinkai.weixin.qq.com');
      expect(PLATFORM_SPECS.weixin!.required).toEqual(['token']);
    });

    it('delivers to the home channel user for a bare weixin target', async () => {
      const { delivery } = deliveryOver(fake);
      const receipt = await delivery.deliver(targetOf('weixin'), 'home');
      expect(receipt.chatId).toBe(WEIXIN_HOME);
      expect(fake.sends[0]!.body.msg.to_user_id).toBe(WEIXIN_HOME);
    });
  });

  describe('what counts as delivered', () => {
    it('counts {"ret":0} as the confirmation, with the client id as the message id', async () => {
      const sent = await senderWith().send(USER, 'hello', '0a1b2c3d4e5f.3');
      expect(sent).toEqual({ messageId: 'agent-0a1b2c3d4e5f.3' });
    });

    it('keeps every digit of a message_id iLink gives', async () => {
      fake.withMessageIds = true;
      const sent = await senderWith().send(USER, 'hello', 'k');
      expect(sent.messageId).toBe('7340000000000000001');
    });

    it('does not count an empty {} answer as delivered: iLink gives it for a session that died', async () => {
      fake.answerNextSendWith({ status: 200, json: {} });
      const error = await failureOf(senderWith().send(USER, 'lost?', 'k'));
      expect(error.kind).toBe('refused');
      expect(error.message).toBe('weixin answered HTTP 200 without confirming the message ({})');
    });

    it('gives the same client id to every attempt at a part, so a retry is recognisable', async () => {
      fake.failNext({ failure: 'unavailable', times: 2 });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'third time');
      const clientIds = fake.requests
        .filter((request) => request.path === '/ilink/bot/sendmessage')
        .map((request) => request.body.msg.client_id);
      expect(clientIds).toEqual(['agent-000000000001.1', 'agent-000000000001.1', 'agent-000000000001.1']);
      expect(timer.waits).toEqual([1000, 2000]);
    });

    it('splits a long answer at 2000 characters', async () => {
      const sender = await deliveryOver(fake).platforms.sender('weixin');
      expect(sender.partLimit).toBe(2000);
    });
  });

  describe('errors iLink answers as HTTP 200', () => {
    it('names the token to check on errcode -14, without printing it, and does not retry', async () => {
      const { delivery, target, timer } = deliveryOver(fake, { token: 'b0f5860fdecb@im.bot:expired-token' });
      const error = await delivery.deliver(target, 'who am I').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toBe(
        'weixin refused the credentials (errcode -14: session timeout); check platforms.weixin.token (or WEIXIN_TOKEN)',
      );
      expect((error as Error).message).not.toContain('expired-token');
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('takes errcode -14 as a refusal even beside ret 0', async () => {
      fake.answerNextSendWith({ status: 200, json: { ret: 0, errcode: -14 } });
      const error = await failureOf(senderWith().send(USER, 'x', 'k'));
      expect(error.message).toBe('weixin refused the credentials (errcode -14); check platforms.weixin.token (or WEIXIN_TOKEN)');
    });

    it("refuses at once, in iLink's words, a message it will not take", async () => {
      const { delivery, timer } = deliveryOver(fake);
      const error = await delivery.deliver(targetOf('weixin:wxid_nobody0001'), 'anyone?').catch((caught: unknown) => caught);
      expect((error as Error).message).toBe('weixin refused the message (errcode -1: user not found)');
      expect(fake.attempts).toBe(1);
      expect(fake.delivered).toEqual([]);
      expect(timer.waits).toEqual([]);
    });

    it('backs off and tries again when iLink answers its frequency limit (-2)', async () => {
      fake.failNext({ failure: 'rate_limited', times: 2 });
      const { delivery, target, timer, log } = deliveryOver(fake);
      await delivery.deliver(target, 'slowly');
      expect(fake.delivered).toEqual(['slowly']);
      expect(timer.waits).toEqual([1000, 2000]);
      expect(log.entries[0]!.message).toBe(
        'delivery to weixin failed (attempt 1 of 3): weixin is rate-limiting (errcode -2: freq limit); trying again in 1 s',
      );
    });

    it('waits the Retry-After of an HTTP 429 from a proxy in front', async () => {
      fake.answerNextSendWith({ status: 429, headers: { 'retry-after': '9' }, text: 'Too Many Requests' });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'after the wait');
      expect(timer.waits).toEqual([9000]);
      expect(fake.delivered).toEqual(['after the wait']);
    });

    it('never shows the token, even when an answer repeats it', async () => {
      fake.answerNextSendWith({ status: 200, json: { ret: -1, errmsg: `bad token ${WEIXIN_TOKEN}` } });
      const error = await failureOf(senderWith().send(USER, 'x', 'k'));
      expect(error.message).toBe('weixin refused the message (errcode -1: bad token ***)');
    });
  });

  describe('destinations iLink cannot address', () => {
    it('refuses a WeChat group at preflight, before anything is sent', async () => {
      const { delivery } = deliveryOver(fake);
      const target = targetOf('weixin:20817562431@chatroom');
      expect(delivery.problemWith(target)).toBe(
        'Delivery target "weixin:20817562431@chatroom" cannot be delivered: weixin cannot post to the WeChat group "20817562431@chatroom": an iLink bot reaches only the users who chat with it (ids ending in @im.wechat).',
      );
      const error = await delivery.deliver(target, 'to the group').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DeliveryError);
      expect(fake.requests).toEqual([]);
    });

    it("refuses a thread id (from a webhook route's deliver_extra) instead of dropping it", async () => {
      const { delivery } = deliveryOver(fake);
      const target: PlatformTarget = { kind: 'platform', platform: 'weixin', destination: WEIXIN_USER, threadId: '42' };
      expect(delivery.problemWith(target)).toMatch(/weixin has no threads/);
      const error = await failureOf(senderWith().send({ chatId: WEIXIN_USER, threadId: '42' }, 'x', 'k'));
      expect(error.message).toBe(`weixin has no threads; deliver to "${WEIXIN_USER}" without thread "42".`);
      expect(fake.requests).toEqual([]);
    });

    it('accepts the user ids iLink gives and classic wxid_ ids', () => {
      const { delivery } = deliveryOver(fake);
      expect(delivery.problemWith(targetOf(`weixin:${WEIXIN_USER}`))).toBeNull();
      expect(delivery.problemWith(targetOf('weixin:wxid_abc123def456'))).toBeNull();
    });
  });

  describe('text as WeChat shows it', () => {
    it('turns a bare < into a full-width one outside code blocks, where WeChat would swallow the rest of the line', async () => {
      const text = ['if a < b and c<=d, see <b>bold</b> </p>', '```js', 'if (a < b) {}', '```', 'x <- y'].join('\n');
      await senderWith().send(USER, text, 'k');
      expect(fake.delivered).toEqual([
        ['if a \uFF1C b and c\uFF1C=d, see <b>bold</b> </p>', '```js', 'if (a < b) {}', '```', 'x \uFF1C- y'].join('\n'),
      ]);
    });
  });
});
