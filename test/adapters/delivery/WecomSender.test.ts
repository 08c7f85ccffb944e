import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { PlatformSendError, type PlatformSender } from '../../../src/application/ports/PlatformSender.js';
import { ConfiguredPlatforms } from '../../../src/adapters/delivery/ConfiguredPlatforms.js';
import { WecomSender } from '../../../src/adapters/delivery/WecomSender.js';
import { PLATFORM_SPECS } from '../../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver } from '../../contract/PlatformSender.contract.js';
import { FakeWecomServer, WECOM_AGENT_ID, WECOM_CORP_ID, WECOM_SECRET } from '../../support/platforms/FakeWecomServer.js';

const targetOf = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;
const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'delivered',
    (caught: unknown) => caught,
  );
const CREDENTIALS_HINT = 'check platforms.wecom.corp_id (or WECOM_CORP_ID) and platforms.wecom.secret (or WECOM_SECRET)';

describe('WecomSender', () => {
  let fake: FakeWecomServer;
  beforeEach(async () => {
    fake = await FakeWecomServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  const senderOver = (extraSettings: Record<string, string> = {}): Promise<PlatformSender> =>
    deliveryOver(fake, extraSettings).platforms.sender('wecom');
  /** A sender on its own, reading time from `clock`. */
  const senderAt = (clock: { now: number }): WecomSender =>
    new WecomSender(platformSettings('wecom', fake.settings, {}, { ...PLATFORM_SPECS.wecom!.defaults }), () => clock.now);

  describe('posting', () => {
    it('gets an access token with the corp id and secret, then posts a text to the group chat with it', async () => {
      const { delivery, target } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'Nightly build passed.');
      const [tokenRequest, send] = fake.requests;
      expect(tokenRequest!.method).toBe('GET');
      expect(tokenRequest!.path).toBe('/cgi-bin/gettoken');
      expect(Object.fromEntries(tokenRequest!.query)).toEqual({ corpid: WECOM_CORP_ID, corpsecret: WECOM_SECRET });
      expect(send!.method).toBe('POST');
      expect(send!.path).toBe('/cgi-bin/appchat/send');
      expect(send!.query.get('access_token')).toMatch(/^wecom-access-token-1-/);
      expect(send!.headers['content-type']).toMatch(/^application\/json/);
      expect(send!.body).toEqual({ chatid: 'opsalerts2024', msgtype: 'text', text: { content: 'Nightly build passed.' } });
      // appchat/send confirms with errcode 0 and no id: the part's own key stands in for one.
      expect(receipt.messageIds).toEqual(['000000000001.1']);
    });

    it("sends the app's message to a member for user:<UserID>, with the numeric agent id, and keeps WeCom's msgid", async () => {
      const { delivery } = deliveryOver(fake);
      const receipt = await delivery.deliver(targetOf('wecom:user:ZhangSan'), 'just for you');
      const [send] = fake.sends;
      expect(send!.path).toBe('/cgi-bin/message/send');
      expect(send!.body).toEqual({
        touser: 'ZhangSan',
        msgtype: 'text',
        agentid: Number(WECOM_AGENT_ID),
        text: { content: 'just for you' },
      });
      expect(receipt.messageIds).toEqual(['msgid-1']);
    });

    it('sends to everyone the app may reach for user:@all', async () => {
      await deliveryOver(fake).delivery.deliver(targetOf('wecom:user:@all'), 'all hands');
      expect(fake.sends[0]!.body.touser).toBe('@all');
    });

    it('delivers to a home channel given as user:<UserID>', async () => {
      const { delivery } = deliveryOver(fake, { home_channel: 'user:lisi' });
      await delivery.deliver(targetOf('wecom'), 'home');
      expect(fake.sends[0]!.body).toMatchObject({ touser: 'lisi' });
    });

    it('delivers a long Chinese answer whole: no part exceeds the 2048 bytes WeCom keeps', async () => {
      const text = Array.from({ length: 60 }, (_, line) => `第${line}行：定时任务的输出内容，包含中文字符与标点。`.repeat(2)).join('\n');
      expect(Buffer.byteLength(text)).toBeGreaterThan(3 * 2048);
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, text);
      const contents = fake.sends.map((send) => send.body.text.content as string);
      expect(contents.length).toBeGreaterThanOrEqual(4);
      for (const content of contents) expect(Buffer.byteLength(content)).toBeLessThanOrEqual(2048);
      // The fake keeps only 2048 bytes of a text, as WeCom does, so any cut text would be missing here.
      expect(fake.delivered).toEqual(contents);
      expect(contents.map((content) => content.replace(/ \(\d+\/\d+\)$/, '')).join('\n')).toBe(text);
    });

    it('refuses a part over 2048 bytes instead of letting WeCom cut it', async () => {
      const sender = await senderOver();
      const error = await failureOf(sender.send({ chatId: 'opsalerts2024', threadId: null }, '汉'.repeat(683), 'key'));
      expect(error).toBeInstanceOf(PlatformSendError);
      expect((error as PlatformSendError).kind).toBe('refused');
      expect((error as Error).message).toBe('wecom takes at most 2048 bytes of text per message and cuts the rest; this part has 2049');
      expect(fake.requests).toEqual([]);
    });
  });

  describe('the access token', () => {
    it('is asked for once and reused by later deliveries and parts', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, 'one');
      await delivery.deliver(targetOf('wecom:user:lisi'), 'two');
      await delivery.deliver(target, 'x'.repeat(1500));
      expect(fake.tokenRequests).toBe(1);
      expect(new Set(fake.tokensUsed).size).toBe(1);
      expect(fake.sends.length).toBeGreaterThanOrEqual(5);
    });

    it('is asked for once when several sends start together', async () => {
      const sender = await senderOver();
      await Promise.all(['a', 'b', 'c'].map((text, index) => sender.send({ chatId: 'opsalerts2024', threadId: null }, text, `k${index}`)));
      expect(fake.tokenRequests).toBe(1);
      expect(fake.delivered.sort()).toEqual(['a', 'b', 'c']);
    });

    it('is renewed a minute before the expires_in WeCom gave, not earlier', async () => {
      const clock = { now: Date.parse('2024-04-05T08:00:00Z') };
      const sender = senderAt(clock);
      const to = { chatId: 'opsalerts2024', threadId: null };
      await sender.send(to, 'first', 'k1');
      clock.now += (7200 - 61) * 1000;
      await sender.send(to, 'second', 'k2');
      expect(fake.tokenRequests).toBe(1);
      clock.now += 2000;
      await sender.send(to, 'third', 'k3');
      expect(fake.tokenRequests).toBe(2);
      expect(fake.tokensUsed).toEqual([fake.tokensUsed[0], fake.tokensUsed[0], expect.stringMatching(/^wecom-access-token-2-/)]);
    });

    it('uses a token that lives less than the margin for half its life only', async () => {
      fake.tokenLifetime = 90;
      const clock = { now: 0 };
      const sender = senderAt(clock);
      const to = { chatId: 'opsalerts2024', threadId: null };
      await sender.send(to, 'first', 'k1');
      clock.now += 44_000;
      await sender.send(to, 'second', 'k2');
      clock.now += 2_000;
      await sender.send(to, 'third', 'k3');
      expect(fake.tokenRequests).toBe(2);
    });

    it('gets exactly one new token when WeCom says the token expired (42001), and sends the part once more', async () => {
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'before');
      fake.expireTokens();
      const receipt = await delivery.deliver(target, 'after expiry');
      expect(fake.tokenRequests).toBe(2);
      expect(fake.attempts).toBe(3);
      expect(fake.delivered).toEqual(['before', 'after expiry']);
      expect(fake.tokensUsed[1]).toBe(fake.tokensUsed[0]);
      expect(fake.tokensUsed[2]).not.toBe(fake.tokensUsed[0]);
      expect(receipt.messageIds).toHaveLength(1);
      expect(timer.waits).toEqual([]);
    });

    it('refreshes once only: a new token refused as well (40014) fails the part naming the credentials', async () => {
      fake.answerNextSendWith({ status: 200, json: { errcode: 40014, errmsg: 'invalid access_token' } });
      fake.answerNextSendWith({ status: 200, json: { errcode: 40014, errmsg: 'invalid access_token' } });
      const { delivery, target, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'no luck'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toBe(
        `wecom refused the credentials (a new access token was refused too, errcode 40014: invalid access_token); ${CREDENTIALS_HINT}`,
      );
      expect(fake.tokenRequests).toBe(2);
      expect(fake.attempts).toBe(2);
      expect(timer.waits).toEqual([]);
    });

    it('names the corp id and secret when gettoken refuses the secret, without printing it', async () => {
      const wrongSecret = 'WRONGwecomSecret-0000000000000000';
      const { delivery, target } = deliveryOver(fake, { secret: wrongSecret });
      const error = await failureOf(delivery.deliver(target, 'who am I'));
      expect((error as Error).message).toMatch(
        /^wecom refused the credentials \(errcode 40001: invalid credential, hint: .*\); check platforms\.wecom\.corp_id \(or WECOM_CORP_ID\) and platforms\.wecom\.secret \(or WECOM_SECRET\)$/,
      );
      expect((error as Error).message).not.toContain(wrongSecret);
      expect(fake.attempts).toBe(0);
    });

    it('names the credentials when gettoken refuses the corp id', async () => {
      const error = await failureOf(deliveryOver(fake, { corp_id: 'wwnotmine000000' }).delivery.deliver(targetOf(fake.target), 'x'));
      expect((error as Error).message).toMatch(/^wecom refused the credentials \(errcode 40013: invalid corpid/);
    });

    it('is unavailable while gettoken answers 5xx, and the delivery backs off and tries again', async () => {
      fake.tokenFailures.push({ status: 503, text: 'Service Unavailable' });
      const sender = await senderOver();
      const error = await failureOf(sender.send({ chatId: 'opsalerts2024', threadId: null }, 'x', 'k'));
      expect(error).toMatchObject({ kind: 'unavailable', message: 'wecom is unavailable (HTTP 503: Service Unavailable)' });

      fake.tokenFailures.push({ status: 502, text: 'Bad Gateway' });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'eventually');
      expect(timer.waits).toEqual([1000]);
      expect(fake.delivered).toEqual(['eventually']);
    });

    it('words a token request answered with a 4xx by what asked for it: a send, or the credentials check that sends nothing', async () => {
      fake.tokenFailures.push({ status: 404, text: 'not found' });
      const sending = await failureOf(senderOver().then((sender) => sender.send({ chatId: 'opsalerts2024', threadId: null }, 'x', 'k')));
      expect(sending).toMatchObject({ kind: 'refused', message: 'wecom refused the message (HTTP 404: not found)' });

      fake.tokenFailures.push({ status: 404, text: 'not found' });
      const checking = await failureOf(senderOver().then((sender) => sender.whoAmI!()));
      expect(checking).toMatchObject({ kind: 'refused', message: 'wecom refused the credentials check (HTTP 404: not found)' });
      expect(fake.delivered).toEqual([]);
    });

    it("says which setting to fix when WeCom refuses the server's IP (60020)", async () => {
      fake.tokenFailures.push({ status: 200, json: { errcode: 60020, errmsg: 'not allow to access from your ip' } });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf(fake.target), 'x'));
      expect((error as Error).message).toBe(
        "wecom refused the access token request (errcode 60020: not allow to access from your ip); add this server's public IP to the app's trusted IPs (企业可信IP) in the WeCom admin console",
      );
    });
  });

  describe("WeCom's errcode in an HTTP 200 answer", () => {
    it('does not count a message to an unknown group chat as delivered and quotes WeCom', async () => {
      const { delivery, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(targetOf('wecom:nosuchchat'), 'lost'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toMatch(/^wecom refused the message \(errcode 86001: chatid invalid, hint: \[1712345678_fake\]/);
      expect(fake.attempts).toBe(1);
      expect(fake.delivered).toEqual([]);
      expect(timer.waits).toEqual([]);
    });

    it("explains 81013: the member is outside the app's visible range", async () => {
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf('wecom:user:wangwu'), 'hello'));
      expect((error as Error).message).toMatch(
        /^wecom refused the message \(errcode 81013: user & party & tag all invalid.*\); the member must be in the app's visible range$/,
      );
    });

    it('names agent_id when WeCom refuses it', async () => {
      const error = await failureOf(deliveryOver(fake, { agent_id: '1000003' }).delivery.deliver(targetOf('wecom:user:lisi'), 'hello'));
      expect((error as Error).message).toMatch(
        /^wecom refused the message \(errcode 40056: invalid agentid.*\); check platforms\.wecom\.agent_id \(or WECOM_AGENT_ID\): it must be the AgentId of the app whose secret is configured$/,
      );
    });

    it('does not count errcode 0 without a msgid as delivered', async () => {
      fake.answerNextSendWith({ status: 200, json: { errcode: 0, errmsg: 'ok' } });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf('wecom:user:lisi'), 'maybe'));
      expect((error as Error).message).toBe('wecom answered HTTP 200 without confirming the message ({"errcode":0,"errmsg":"ok"})');
    });

    it('does not count a 200 without an errcode as delivered', async () => {
      fake.answerNextSendWith({ status: 200, text: '<html>proxy</html>' });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf(fake.target), 'maybe'));
      expect((error as Error).message).toBe('wecom answered HTTP 200 without confirming the message (<html>proxy</html>)');
    });

    it('fails a member message that WeCom lists as not delivered (invaliduser)', async () => {
      fake.answerNextSendWith({ status: 200, json: { errcode: 0, errmsg: 'ok', invaliduser: 'lisi', msgid: 'msgid-9' } });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf('wecom:user:lisi'), 'hello'));
      expect((error as Error).message).toBe("wecom did not deliver to lisi: not in the app's visible range, unknown, or without a licence");
    });

    it('waits and tries again when WeCom says calls are over its frequency limit (45009)', async () => {
      fake.failNext({ failure: 'rate_limited' });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'slowly');
      expect(timer.waits).toEqual([1000]);
      expect(fake.delivered).toEqual(['slowly']);
    });

    it('reports errcode -1 (system busy) as WeCom being unavailable', async () => {
      fake.failNext({ failure: 'unavailable' });
      const error = await failureOf(senderOver().then((sender) => sender.send({ chatId: 'opsalerts2024', threadId: null }, 'x', 'k')));
      expect(error).toMatchObject({ kind: 'unavailable' });
      expect((error as Error).message).toMatch(/^wecom is unavailable \(errcode -1: system busy/);
    });
  });

  describe('destinations WeCom cannot address', () => {
    it.each([
      ['wecom:ops-alerts', 'a group chat id is 1 to 32 letters and digits'],
      ['wecom:user:', 'a UserID is 1 to 64 letters'],
      ['wecom:user:alice|bob', 'one member per target'],
      [`wecom:${'a'.repeat(33)}`, 'a group chat id is 1 to 32 letters and digits'],
    ])('refuses %s before sending anything', async (text, why) => {
      const { delivery } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(targetOf(text), 'hello'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toContain(`Delivery target "${text}" cannot be delivered: wecom cannot address`);
      expect((error as Error).message).toContain(why);
      expect(fake.requests).toEqual([]);
    });

    it('refuses a thread instead of posting to the chat without it', async () => {
      const { delivery } = deliveryOver(fake);
      const error = await failureOf(
        delivery.deliver({ kind: 'platform', platform: 'wecom', destination: 'opsalerts2024', threadId: '17' }, 'hello'),
      );
      expect((error as Error).message).toBe(
        'Delivery target "wecom:opsalerts2024:17" cannot be delivered: wecom has no threads; deliver to "opsalerts2024" without thread "17"',
      );
      expect(fake.requests).toEqual([]);
    });

    it('refuses a member message while agent_id is not a number', () => {
      const { platforms } = deliveryOver(fake, { agent_id: 'my-app' });
      expect(platforms.addressProblem('wecom', { chatId: 'user:lisi', threadId: null })).toBe(
        'platforms.wecom.agent_id (or WECOM_AGENT_ID) is "my-app"; it must be the app\'s AgentId, a number',
      );
      expect(platforms.addressProblem('wecom', { chatId: 'opsalerts2024', threadId: null })).toBeNull();
    });

    it('counts as configured only with corp_id, secret and agent_id', () => {
      expect(deliveryOver(fake).platforms.status('wecom')).toMatchObject({ configured: true, missing: [] });
      const { agent_id: _agentId, ...withoutAgent } = fake.settings;
      const platforms = new ConfiguredPlatforms({ wecom: withoutAgent }, {});
      expect(platforms.status('wecom')).toMatchObject({ configured: false, missing: [{ key: 'agent_id', variable: 'WECOM_AGENT_ID' }] });
    });
  });

  describe('secrets', () => {
    it('cuts the access token out of an error that quotes it', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, 'first');
      const token = fake.tokensUsed[0]!;
      fake.answerNextSendWith({ status: 200, json: { errcode: 40035, errmsg: `invalid parameter access_token=${token}` } });
      const error = await failureOf(delivery.deliver(target, 'second'));
      expect((error as Error).message).toBe('wecom refused the message (errcode 40035: invalid parameter access_token=***)');
    });

    it('names only the address, never the secret in the token URL, when WeCom cannot be reached', async () => {
      const closedPort = await freePort();
      const { delivery, target } = deliveryOver(fake, { base_url: `http://127.0.0.1:${closedPort}` });
      const error = await failureOf(delivery.deliver(target, 'anyone?'));
      expect((error as Error).message).toBe(
        `could not reach wecom at http://127.0.0.1:${closedPort} (ECONNREFUSED) (gave up after 3 attempts)`,
      );
      expect((error as Error).message).not.toContain(WECOM_SECRET);
    });
  });
});

/** A port nothing listens on. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
