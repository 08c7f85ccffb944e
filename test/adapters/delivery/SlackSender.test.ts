import { PlatformSendError, type PlatformSender } from '../../../src/application/ports/PlatformSender.js';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver } from '../../contract/PlatformSender.contract.js';
import { FakeSlackServer, SLACK_TOKEN } from '../../support/platforms/FakeSlackServer.js';

const targetOf = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;

describe('SlackSender', () => {
  let fake: FakeSlackServer;
  beforeEach(async () => {
    fake = await FakeSlackServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  const senderOver = (extraSettings: Record<string, string> = {}): Promise<PlatformSender> =>
    deliveryOver(fake, extraSettings).platforms.sender('slack');
  const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
    promise.then(
      () => 'delivered',
      (caught: unknown) => caught,
    );

  describe('posting', () => {
    it("posts the answer as JSON to chat.postMessage with the bot token and returns Slack's ts as the message id", async () => {
      const { delivery, target } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'Nightly build passed.');
      const [send] = fake.sends;
      expect(send!.method).toBe('POST');
      expect(send!.path).toBe('/chat.postMessage');
      expect(send!.headers.authorization).toBe(`Bearer ${SLACK_TOKEN}`);
      expect(send!.headers['content-type']).toMatch(/^application\/json/);
      expect(send!.body).toEqual({ channel: 'C0ALERTS01', text: 'Nightly build passed.' });
      expect(receipt.messageIds).toEqual(['1712345679.000100']);
    });

    it('replies in the thread a target names, as thread_ts', async () => {
      const { delivery } = deliveryOver(fake);
      await delivery.deliver(targetOf('slack:C0ALERTS01:1712340000.123456'), 'in the thread');
      expect(fake.sends[0]!.body).toEqual({ channel: 'C0ALERTS01', text: 'in the thread', thread_ts: '1712340000.123456' });
    });

    it('shows <, > and & as written instead of as Slack mentions or links', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, 'if a < b && c > d then <!channel>');
      expect(fake.delivered).toEqual(['if a &lt; b &amp;&amp; c &gt; d then &lt;!channel&gt;']);
    });
  });

  describe('a user id as the destination', () => {
    it('opens a direct message with the user and posts there', async () => {
      const { delivery } = deliveryOver(fake);
      const receipt = await delivery.deliver(targetOf('slack:U0ALICE001'), 'just for you');
      const [open] = fake.callsTo('conversations.open');
      expect(open!.headers.authorization).toBe(`Bearer ${SLACK_TOKEN}`);
      expect(open!.body).toEqual({ users: 'U0ALICE001' });
      expect(fake.sends[0]!.body).toMatchObject({ channel: 'D0ALICE001', text: 'just for you' });
      expect(receipt.messageIds).toHaveLength(1);
    });

    it('opens the direct message once per user and reuses it for later deliveries', async () => {
      const { delivery } = deliveryOver(fake);
      await delivery.deliver(targetOf('slack:U0ALICE001'), 'first');
      await delivery.deliver(targetOf('slack:U0ALICE001'), 'second');
      await delivery.deliver(targetOf('slack:W0GRIDBOB1'), 'to an Enterprise Grid user');
      expect(fake.callsTo('conversations.open').map((request) => request.body.users)).toEqual(['U0ALICE001', 'W0GRIDBOB1']);
      expect(fake.sends.map((request) => request.body.channel)).toEqual(['D0ALICE001', 'D0ALICE001', 'D0GRIDBOB1']);
    });

    it("fails at once, naming Slack's reason, when the user does not exist", async () => {
      const { delivery } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(targetOf('slack:U0NOBODY01'), 'hello?'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toBe('slack refused conversations.open (user_not_found)');
      expect(fake.attempts).toBe(0);
    });
  });

  describe("Slack's error answers (HTTP 200 with ok: false)", () => {
    it('does not count a message to an unknown channel as delivered and says channel_not_found', async () => {
      const { delivery, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(targetOf('slack:C0NOWHERE1'), 'lost'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toBe('slack refused the message (channel_not_found)');
      expect(fake.attempts).toBe(1);
      expect(fake.delivered).toEqual([]);
      expect(timer.waits).toEqual([]);
    });

    it("refuses a message to an archived channel in Slack's words", async () => {
      fake.channels.push({ id: 'C0OLDNEWS1', name: 'old-news', is_archived: true });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf('slack:C0OLDNEWS1'), 'too late'));
      expect((error as Error).message).toBe('slack refused the message (is_archived)');
    });

    it.each(['not_in_channel', 'msg_too_long'])('fails at once on %s without retrying', async (code) => {
      fake.answerNextSendWith({ status: 200, json: { ok: false, error: code } });
      const { delivery, target, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'no'));
      expect((error as Error).message).toBe(`slack refused the message (${code})`);
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('names the scope the bot lacks when Slack answers missing_scope', async () => {
      fake.answerNextSendWith({
        status: 200,
        json: { ok: false, error: 'missing_scope', needed: 'chat:write', provided: 'channels:read' },
      });
      const error = await failureOf(deliveryOver(fake).delivery.deliver(targetOf(fake.target), 'no'));
      expect((error as Error).message).toBe('slack refused the message (missing_scope, needs chat:write)');
    });

    it('tells the user to check the bot token when Slack answers invalid_auth, without printing the token', async () => {
      const wrongToken = 'xoxb-9999-wrong-token';
      const { delivery, target } = deliveryOver(fake, { bot_token: wrongToken });
      const error = await failureOf(delivery.deliver(target, 'who am I'));
      expect((error as Error).message).toBe(
        'slack refused the credentials (invalid_auth); check platforms.slack.bot_token (or SLACK_BOT_TOKEN)',
      );
      expect((error as Error).message).not.toContain(wrongToken);
      expect(fake.delivered).toEqual([]);
    });

    it.each(['not_authed', 'account_inactive', 'token_revoked', 'token_expired'])('counts %s as refused credentials', async (code) => {
      fake.answerNextSendWith({ status: 200, json: { ok: false, error: code } });
      const error = await failureOf(senderOver().then((sender) => sender.send({ chatId: 'C0ALERTS01', threadId: null }, 'x', 'key')));
      expect(error).toBeInstanceOf(PlatformSendError);
      expect((error as PlatformSendError).kind).toBe('refused');
      expect((error as Error).message).toBe(
        `slack refused the credentials (${code}); check platforms.slack.bot_token (or SLACK_BOT_TOKEN)`,
      );
    });

    it('does not count ok: true without a ts as delivered', async () => {
      fake.answerNextSendWith({ status: 200, json: { ok: true } });
      const { delivery, target } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'maybe'));
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toBe('slack answered HTTP 200 without confirming the message ({"ok":true})');
      expect(fake.delivered).toEqual([]);
    });

    it('retries when Slack says it is unavailable in a 200 answer', async () => {
      fake.answerNextSendWith({ status: 200, json: { ok: false, error: 'service_unavailable' } });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'second try');
      expect(timer.waits).toEqual([1000]);
      expect(fake.delivered).toEqual(['second try']);
    });

    it('waits and retries when Slack answers ratelimited in a 200 answer', async () => {
      fake.answerNextSendWith({ status: 200, headers: { 'retry-after': '4' }, json: { ok: false, error: 'ratelimited' } });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'slowly');
      expect(timer.waits).toEqual([4000]);
      expect(fake.delivered).toEqual(['slowly']);
    });
  });

  describe('HTTP failures', () => {
    it('waits the Retry-After seconds of a 429 before posting again', async () => {
      fake.failNext({ failure: 'rate_limited', retryAfterSeconds: 12 });
      const { delivery, target, timer, log } = deliveryOver(fake);
      await delivery.deliver(target, 'after the pause');
      expect(timer.waits).toEqual([12000]);
      expect(fake.delivered).toEqual(['after the pause']);
      expect(log.entries.map((entry) => entry.message)).toEqual([
        'delivery to slack failed (attempt 1 of 3): slack is rate-limiting (HTTP 429: ratelimited); trying again in 12 s',
      ]);
    });

    it("reports a 429 as rate-limited with Slack's hint in milliseconds", async () => {
      fake.failNext({ failure: 'rate_limited', retryAfterSeconds: 30 });
      const error = await failureOf(senderOver().then((sender) => sender.send({ chatId: 'C0ALERTS01', threadId: null }, 'x', 'key')));
      expect(error).toMatchObject({ kind: 'rate_limited', retryAfterMs: 30000 });
    });

    it('treats a 5xx as Slack being unavailable, quoting its answer', async () => {
      fake.failNext({ failure: 'unavailable' });
      const error = await failureOf(senderOver().then((sender) => sender.send({ chatId: 'C0ALERTS01', threadId: null }, 'x', 'key')));
      expect(error).toMatchObject({ kind: 'unavailable' });
      expect((error as Error).message).toMatch(/^slack is unavailable \(HTTP 503: .*temporarily unavailable/);
    });
  });

  describe('listing channels', () => {
    beforeEach(() => {
      fake.channels = [
        { id: 'C0HOME0001', name: 'general' },
        { id: 'C0ALERTS01', name: 'alerts' },
        { id: 'G0PRIVATE1', name: 'ops-private', is_private: true },
        { id: 'C0RANDOM01', name: 'random' },
        { id: 'C0ARCHIVE1', name: 'old-project', is_archived: true },
        { id: 'C0RELEASE1', name: 'releases' },
      ];
      fake.pageSize = 2;
    });

    it('follows next_cursor across pages and lists every channel the bot can post to, archived ones left out', async () => {
      const sender = await senderOver();
      const channels = await sender.listChannels!();
      expect(channels).toEqual([
        { id: 'C0HOME0001', name: 'general' },
        { id: 'C0ALERTS01', name: 'alerts' },
        { id: 'G0PRIVATE1', name: 'ops-private' },
        { id: 'C0RANDOM01', name: 'random' },
        { id: 'C0RELEASE1', name: 'releases' },
      ]);
      const pages = fake.callsTo('conversations.list');
      expect(pages).toHaveLength(3);
      expect(pages[0]!.query.get('cursor')).toBeNull();
      expect(pages.slice(1).every((page) => (page.query.get('cursor') ?? '') !== '')).toBe(true);
      for (const page of pages) {
        expect(page.method).toBe('GET');
        expect(page.headers.authorization).toBe(`Bearer ${SLACK_TOKEN}`);
        expect(Object.fromEntries([...page.query].filter(([key]) => key !== 'cursor'))).toEqual({
          types: 'public_channel,private_channel',
          exclude_archived: 'true',
          limit: '200',
        });
      }
    });

    it('names the bot token when Slack refuses it while listing', async () => {
      const sender = await senderOver({ bot_token: 'xoxb-0000-revoked' });
      const error = await failureOf(sender.listChannels!());
      expect((error as Error).message).toBe(
        'slack refused the credentials (invalid_auth); check platforms.slack.bot_token (or SLACK_BOT_TOKEN)',
      );
    });
  });
});
