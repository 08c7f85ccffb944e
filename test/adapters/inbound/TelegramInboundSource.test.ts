import type { InboundChatSource } from '../../../src/application/ports/InboundChat.js';
import type { Timer } from '../../../src/application/ports/Timer.js';
import type { InboundMessage } from '../../../src/domain/chat/inboundMessage.js';
import { createTelegramInboundSource } from '../../../src/adapters/inbound/TelegramInboundSource.js';
import { InMemoryInboundCursorStore } from '../../support/fakes/InMemoryInboundCursorStore.js';
import { eventually } from '../../support/processLiveness.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingReceiverHealth } from '../../support/fakes/RecordingReceiverHealth.js';
import { RecordingTimer } from '../../support/fakes/RecordingTimer.js';
import { TELEGRAM_TOKEN } from '../../support/platforms/FakeTelegramServer.js';
import { FakeTelegramUpdatesServer, TELEGRAM_BOT } from '../../support/platforms/FakeTelegramUpdatesServer.js';

/** A logger whose entries a test can wait for. */
class WatchedLogger extends RecordingLogger {
  private waiters: Array<{ when: (entry: { level: string; message: string }) => boolean; resolve: () => void }> = [];

  override debug(message: string): void {
    super.debug(message);
    this.wake();
  }
  override info(message: string): void {
    super.info(message);
    this.wake();
  }
  override warn(message: string): void {
    super.warn(message);
    this.wake();
  }
  override error(message: string): void {
    super.error(message);
    this.wake();
  }

  logged(level: string, pattern: RegExp): Promise<void> {
    const when = (entry: { level: string; message: string }) => entry.level === level && pattern.test(entry.message);
    if (this.entries.some(when)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ when, resolve }));
  }

  lines(level: string): string[] {
    return this.entries.filter((entry) => entry.level === level).map((entry) => entry.message);
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) {
      if (this.entries.some(waiter.when)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }
}

/** What the source handed over, with a way to wait for the n-th message. */
class Inbox {
  readonly messages: InboundMessage[] = [];
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  readonly deliver = async (message: InboundMessage): Promise<void> => {
    this.messages.push(message);
    for (const waiter of [...this.waiters]) {
      if (this.messages.length >= waiter.count) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  async received(count: number): Promise<InboundMessage[]> {
    if (this.messages.length < count) await new Promise<void>((resolve) => this.waiters.push({ count, resolve }));
    return this.messages;
  }

  get texts(): string[] {
    return this.messages.map((message) => message.text);
  }
}

const GROUP = { id: -1001234567890, type: 'supergroup', title: 'Ops' };
const FORUM = { id: -1009876543210, type: 'supergroup', title: 'Ops forum', is_forum: true };
const ADA = { id: 777, is_bot: false, first_name: 'Ada', username: 'ada' };
const BOB = { id: 888, is_bot: false, first_name: 'Bob' };
const MARKER = 'marker: the last message of the test';

describe('TelegramInboundSource', () => {
  let fake: FakeTelegramUpdatesServer;
  let cursors: InMemoryInboundCursorStore;
  let logger: WatchedLogger;
  let sources: InboundChatSource[];

  beforeEach(async () => {
    fake = await FakeTelegramUpdatesServer.start();
    cursors = new InMemoryInboundCursorStore();
    logger = new WatchedLogger();
    sources = [];
  });

  afterEach(async () => {
    await Promise.all(sources.map((source) => source.stop()));
    await fake.close();
    // Whatever happened, no log line carries the token.
    expect(JSON.stringify(logger.entries)).not.toContain(TELEGRAM_TOKEN);
  });

  const sourceOver = (options: { timer?: Timer; botToken?: string; baseUrl?: string } = {}): InboundChatSource => {
    const source = createTelegramInboundSource({
      botToken: options.botToken ?? TELEGRAM_TOKEN,
      baseUrl: options.baseUrl ?? fake.url,
      cursors,
      logger,
      timer: options.timer ?? new RecordingTimer(),
    });
    sources.push(source);
    return source;
  };

  /**
   * Starts a source, pushes `messages` (or, given as `{ update }`, other updates), then a private
   * marker, and returns what was handed over before the marker.
   */
  const textsHandedOver = async (messages: Array<Record<string, unknown>>): Promise<InboundMessage[]> => {
    const inbox = new Inbox();
    await sourceOver().start(inbox.deliver);
    for (const message of messages) {
      if (message.update !== undefined) fake.pushUpdate(message.update as Record<string, unknown>);
      else fake.pushMessage(message);
    }
    const marker = fake.pushMessage({ text: MARKER });
    while (inbox.messages.at(-1)?.text !== MARKER) await inbox.received(inbox.messages.length + 1);
    // Everything before the marker, handed over or passed over, is confirmed to Telegram.
    await fake.waitForPoll((poll) => poll.offset === marker + 1);
    expect(fake.pendingUpdateIds).toEqual([]);
    return inbox.messages.slice(0, -1);
  };

  describe('receiving', () => {
    it('learns who it is with getMe, then long-polls getUpdates for messages only', async () => {
      await sourceOver().start(new Inbox().deliver);
      const poll = await fake.waitForPoll();
      expect(fake.paths.slice(0, 2)).toEqual([`/bot${TELEGRAM_TOKEN}/getMe`, `/bot${TELEGRAM_TOKEN}/getUpdates`]);
      expect(poll).toEqual({ offset: undefined, timeout: 30, allowed_updates: ['message'] });
    });

    it('hands over a text in a private chat with who wrote it, where, and the message id', async () => {
      const inbox = new Inbox();
      await sourceOver().start(inbox.deliver);
      fake.pushMessage({ message_id: 4711, text: 'What is on my calendar tomorrow?' });
      fake.pushMessage({ from: BOB, chat: { id: 888, type: 'private', first_name: 'Bob' }, text: 'hello' });
      const [first, second] = await inbox.received(2);
      expect(first).toEqual({
        conversation: { platform: 'telegram', chatId: '777', threadId: null },
        userId: '777',
        userName: 'ada',
        messageId: '4711',
        text: 'What is on my calendar tomorrow?',
      });
      // Without a username, the first name.
      expect(second).toMatchObject({ conversation: { chatId: '888' }, userId: '888', userName: 'Bob', text: 'hello' });
    });

    it('hands messages over one at a time, in order, each only after the previous hand-over finished', async () => {
      const handedOver: string[] = [];
      let release!: () => void;
      const firstHeld = new Promise<void>((resolve) => (release = resolve));
      let firstArrived!: () => void;
      const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
      const inbox = new Inbox();
      await sourceOver().start(async (message) => {
        handedOver.push(`start ${message.text}`);
        if (message.text === 'one') {
          firstArrived();
          await firstHeld;
        }
        handedOver.push(`end ${message.text}`);
        await inbox.deliver(message);
      });
      fake.pushMessage({ text: 'one' });
      fake.pushMessage({ text: 'two' });
      fake.pushMessage({ text: 'three' });
      await arrived;
      expect(handedOver).toEqual(['start one']);
      release();
      await inbox.received(3);
      expect(handedOver).toEqual(['start one', 'end one', 'start two', 'end two', 'start three', 'end three']);
    });

    it('in a group, hands over only what addresses the bot: a mention, a command for it or for no bot, a reply to it', async () => {
      const inGroup = (fields: Record<string, unknown>) => ({ chat: GROUP, from: ADA, ...fields });
      const handed = await textsHandedOver([
        inGroup({ text: 'just chatting among ourselves' }),
        inGroup({ text: '@delivery_bot what is the load on db1?' }),
        inGroup({ text: 'hey @other_bot, ping' }),
        inGroup({ text: '/status@other_bot' }),
        inGroup({ text: '/status@delivery_bot db1' }),
        inGroup({ text: '/status' }),
        inGroup({ text: 'and tomorrow?', reply_to_message: { message_id: 5, from: TELEGRAM_BOT, chat: GROUP, text: 'Today: sunny.' } }),
        inGroup({ text: 'agreed', reply_to_message: { message_id: 6, from: BOB, chat: GROUP, text: 'ship it' } }),
        inGroup({ text: 'mail @ada_lovelace about it' }),
      ]);
      expect(handed.map((message) => message.text)).toEqual(['what is the load on db1?', '/status db1', '/status', 'and tomorrow?']);
      expect(handed[0]).toMatchObject({ conversation: { platform: 'telegram', chatId: '-1001234567890', threadId: null }, userId: '777' });
    });

    it('takes the mention of the bot out of the text wherever it stands, in any letter case', async () => {
      const handed = await textsHandedOver([
        { chat: GROUP, text: '@Delivery_Bot: restart the worker' },
        { chat: GROUP, text: 'can you, @delivery_bot, check the queue?' },
        { chat: GROUP, text: 'ask @delivery_bot, what is up' },
        { chat: GROUP, text: 'thanks @delivery_bot' },
        { text: '@delivery_bot in a private chat too' },
      ]);
      expect(handed.map((message) => message.text)).toEqual([
        'restart the worker',
        'can you, check the queue?',
        'ask what is up',
        'thanks',
        'in a private chat too',
      ]);
    });

    it('hands over nothing from bots, chats posting as themselves, edits, messages without text, or a bare mention', async () => {
      const handed = await textsHandedOver([
        { from: { id: 999, is_bot: true, first_name: 'Other', username: 'other_bot' }, chat: GROUP, text: '@delivery_bot ping' },
        {
          from: { id: 1087968824, is_bot: true, first_name: 'Group', username: 'GroupAnonymousBot' },
          sender_chat: GROUP,
          chat: GROUP,
          text: '@delivery_bot as admin',
        },
        {
          from: { id: 777000, is_bot: false, first_name: 'Telegram' },
          sender_chat: { id: -100555, type: 'channel' },
          chat: GROUP,
          text: 'a channel post',
        },
        {
          photo: [{ file_id: 'p1', file_unique_id: 'u1', width: 90, height: 90 }],
          caption: '@delivery_bot what is this?',
          caption_entities: [{ type: 'mention', offset: 0, length: 13 }],
        },
        { sticker: { file_id: 's1', file_unique_id: 'u2', type: 'regular', width: 512, height: 512, is_animated: false, is_video: false } },
        { chat: GROUP, text: '@delivery_bot' },
        { chat: { id: -100777, type: 'channel', title: 'News' }, text: 'in a channel' },
        {
          update: {
            edited_message: { message_id: 3, from: ADA, chat: { id: 777, type: 'private' }, date: 1, edit_date: 2, text: 'edited' },
          },
        },
      ]);
      expect(handed).toEqual([]);
    });

    it('names a forum topic as the thread, and a reply chain in an ordinary group as none', async () => {
      const handed = await textsHandedOver([
        { chat: FORUM, message_thread_id: 17, is_topic_message: true, text: '@delivery_bot in topic 17' },
        {
          chat: GROUP,
          message_thread_id: 90,
          text: '@delivery_bot in a reply chain',
          reply_to_message: { message_id: 90, from: BOB, chat: GROUP, text: 'x' },
        },
        { chat: FORUM, text: '@delivery_bot in the General topic' },
      ]);
      expect(handed.map((message) => [message.text, message.conversation.threadId])).toEqual([
        ['in topic 17', '17'],
        ['in a reply chain', null],
        ['in the General topic', null],
      ]);
      expect(handed[0]!.conversation).toEqual({ platform: 'telegram', chatId: '-1009876543210', threadId: '17' });
    });

    it('does not take every message of a topic the bot opened for a reply to the bot', async () => {
      const topicStart = {
        message_id: 17,
        message_thread_id: 17,
        from: TELEGRAM_BOT,
        chat: FORUM,
        forum_topic_created: { name: 'Deploys', icon_color: 7322096 },
        is_topic_message: true,
      };
      const handed = await textsHandedOver([
        { chat: FORUM, message_thread_id: 17, is_topic_message: true, text: 'talking in the topic', reply_to_message: topicStart },
        {
          chat: FORUM,
          message_thread_id: 17,
          is_topic_message: true,
          text: 'a real reply',
          reply_to_message: { message_id: 30, message_thread_id: 17, from: TELEGRAM_BOT, chat: FORUM, text: 'Deployed.' },
        },
      ]);
      expect(handed.map((message) => message.text)).toEqual(['a real reply']);
    });
  });

  describe('keeping its place', () => {
    it('stores the next update id after each hand-over and asks Telegram from there', async () => {
      const inbox = new Inbox();
      await sourceOver().start(inbox.deliver);
      const id = fake.pushMessage({ text: 'first' });
      await inbox.received(1);
      const poll = await fake.waitForPoll((candidate) => candidate.offset === id + 1);
      expect(poll.offset).toBe(id + 1);
      expect(cursors.cursors.get('telegram')).toBe(String(id + 1));
      // Telegram has forgotten the update the offset confirmed.
      expect(fake.pendingUpdateIds).toEqual([]);
    });

    it('after a restart, starts where it stopped: an answered message is not handed over again', async () => {
      const before = new Inbox();
      const first = sourceOver();
      await first.start(before.deliver);
      const id = fake.pushMessage({ text: 'before the restart' });
      await before.received(1);
      await first.stop();

      const pollsBefore = fake.polls.length;
      const after = new Inbox();
      await sourceOver().start(after.deliver);
      await fake.waitForPolls(pollsBefore + 1);
      expect(fake.polls[pollsBefore]!.offset).toBe(id + 1);
      fake.pushMessage({ text: 'after the restart' });
      expect((await after.received(1)).map((message) => message.text)).toEqual(['after the restart']);
      expect(before.texts).toEqual(['before the restart']);
    });

    it('hands a message over again, after a back-off, when handing it over failed, and does not skip it', async () => {
      const timer = new RecordingTimer();
      const inbox = new Inbox();
      let attempts = 0;
      await sourceOver({ timer }).start(async (message) => {
        attempts += 1;
        if (attempts === 1) throw new Error('the conversation store is full');
        await inbox.deliver(message);
      });
      fake.pushMessage({ message_id: 51, text: 'please answer' });
      fake.pushMessage({ text: 'and this' });
      expect((await inbox.received(2)).map((message) => message.text)).toEqual(['please answer', 'and this']);
      expect(logger.lines('warn')).toEqual([
        'telegram: message 51 in 777 could not be handed over (the conversation store is full); retrying',
      ]);
      expect(timer.waits).toEqual([1000]);
      await logger.logged('info', /receiving messages again/);
      expect(logger.lines('info')).toEqual([
        expect.stringMatching(/^telegram: receiving messages again after \d+ s \(1 failed attempt\)$/),
      ]);
    });

    it('still holds a message whose hand-over failed when it stops, and hands it over after a restart', async () => {
      const timer = new ManualTimer();
      const first = sourceOver({ timer });
      await first.start(async () => {
        throw new Error('not now');
      });
      fake.pushMessage({ text: 'do not lose me' });
      await logger.logged('warn', /could not be handed over/);
      await first.stop();

      const inbox = new Inbox();
      await sourceOver().start(inbox.deliver);
      expect((await inbox.received(1)).map((message) => message.text)).toEqual(['do not lose me']);
    });

    it('starts from what Telegram still holds when the stored offset is not an update id', async () => {
      await cursors.set('telegram', 'banana');
      const inbox = new Inbox();
      await sourceOver().start(inbox.deliver);
      fake.pushMessage({ text: 'hi' });
      await inbox.received(1);
      expect(fake.polls[0]!.offset).toBeUndefined();
      expect(logger.lines('warn')).toEqual([
        'telegram: the stored update offset "banana" is not an update id; starting from the updates Telegram still holds',
      ]);
    });
  });

  describe('outages', () => {
    it('polls again after the server drops the long poll, logging the outage once and its end once', async () => {
      const timer = new RecordingTimer();
      const inbox = new Inbox();
      await sourceOver({ timer }).start(inbox.deliver);
      await fake.waitForHeldPoll();
      fake.scriptPolls('drop', 'drop');
      fake.dropHeldPolls();
      await fake.waitForPolls(4);
      fake.pushMessage({ text: 'are you back?' });
      expect((await inbox.received(1)).map((message) => message.text)).toEqual(['are you back?']);
      expect(logger.lines('warn')).toEqual([
        expect.stringMatching(
          /^telegram: cannot receive messages: could not reach telegram at http:\/\/127\.0\.0\.1:\d+ \(.+\); retrying$/,
        ),
      ]);
      expect(logger.lines('info')).toEqual([
        expect.stringMatching(/^telegram: receiving messages again after \d+ s \(3 failed attempts\)$/),
      ]);
      expect(timer.waits).toEqual([1000, 2000, 4000]);
    });

    it('backs off while Telegram answers 5xx and goes back to the first step once it works', async () => {
      const timer = new RecordingTimer();
      const inbox = new Inbox();
      const bad = { status: 502, json: { ok: false, error_code: 502, description: 'Bad Gateway' } };
      // Three failures, a long poll that ends with nothing new, one more failure.
      fake.scriptPolls(bad, bad, bad, { status: 200, json: { ok: true, result: [] } }, bad);
      await sourceOver({ timer }).start(inbox.deliver);
      fake.pushMessage({ text: 'one' });
      await inbox.received(1);
      expect(timer.waits).toEqual([1000, 2000, 4000, 1000]);
      expect(logger.lines('warn')).toEqual([
        'telegram: getUpdates failed (HTTP 502: Bad Gateway); retrying',
        'telegram: getUpdates failed (HTTP 502: Bad Gateway); retrying',
      ]);
      expect(logger.lines('info')).toEqual([
        expect.stringMatching(/^telegram: receiving messages again after 7 s \(3 failed attempts\)$/),
        expect.stringMatching(/^telegram: receiving messages again after 1 s \(1 failed attempt\)$/),
      ]);
    });

    it('says once that another poller or a webhook holds the bot (409) and keeps trying', async () => {
      const timer = new RecordingTimer();
      const inbox = new Inbox();
      const conflict = {
        status: 409,
        json: {
          ok: false,
          error_code: 409,
          description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
        },
      };
      fake.scriptPolls(conflict, conflict);
      await sourceOver({ timer }).start(inbox.deliver);
      fake.pushMessage({ text: 'finally' });
      await inbox.received(1);
      expect(logger.lines('warn')).toEqual([
        "telegram: another program is receiving this bot's updates or a webhook is set (HTTP 409: Conflict: terminated by other getUpdates request; make sure that only one bot instance is running); stop the other poller or delete the webhook (deleteWebhook); retrying",
      ]);
      expect(timer.waits).toEqual([1000, 2000]);
    });

    it('waits as long as a 429 asks (retry_after) before polling again', async () => {
      const timer = new RecordingTimer();
      const inbox = new Inbox();
      fake.scriptPolls({
        status: 429,
        json: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 7', parameters: { retry_after: 7 } },
      });
      await sourceOver({ timer }).start(inbox.deliver);
      fake.pushMessage({ text: 'hi' });
      await inbox.received(1);
      expect(timer.waits).toEqual([7000]);
      expect(logger.lines('warn')).toEqual([
        'telegram is rate-limiting getUpdates (HTTP 429: Too Many Requests: retry after 7); waiting as it asks',
      ]);
    });

    it('refuses to start with a token Telegram does not accept, naming the setting and never the token', async () => {
      const wrong = '999999:WRONG-token-value';
      const failure = await sourceOver({ botToken: wrong })
        .start(new Inbox().deliver)
        .then(
          () => 'started',
          (caught: Error) => caught.message,
        );
      expect(failure).toBe(
        'telegram refused the bot token (HTTP 401: Unauthorized); check platforms.telegram.bot_token (or TELEGRAM_BOT_TOKEN)',
      );
      expect(fake.polls).toEqual([]);
      expect(JSON.stringify(logger.entries)).not.toContain(wrong);
    });

    it('refuses to start when the API root answers 404, naming the token and the base URL', async () => {
      const failure = await sourceOver({ baseUrl: `${fake.url}/not-the-bot-api` })
        .start(new Inbox().deliver)
        .then(
          () => 'started',
          (caught: Error) => caught.message,
        );
      expect(failure).toBe(
        'telegram does not know the bot token (HTTP 404: Not Found); check platforms.telegram.bot_token (or TELEGRAM_BOT_TOKEN) and platforms.telegram.base_url (or TELEGRAM_BASE_URL)',
      );
    });

    it('starts while Telegram is out of reach and receives once it answers', async () => {
      const timer = new ManualTimer();
      const inbox = new Inbox();
      const port = Number(new URL(fake.url).port);
      await fake.close();
      // Nothing listens: start resolves all the same and the source keeps trying in the background.
      await sourceOver({ timer, baseUrl: `http://127.0.0.1:${port}` }).start(inbox.deliver);
      await logger.logged('warn', /cannot receive messages/);
      fake = await FakeTelegramUpdatesServer.start(port);
      timer.advance(1000);
      fake.pushMessage({ text: 'up again' });
      expect((await inbox.received(1)).map((message) => message.text)).toEqual(['up again']);
      expect(logger.lines('warn')).toEqual([
        expect.stringMatching(
          /^telegram: cannot receive messages: could not reach telegram at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); retrying$/,
        ),
      ]);
      expect(logger.lines('info')).toEqual([expect.stringMatching(/^telegram: receiving messages again after 1 s \(1 failed attempt\)$/)]);
    });

    it('tells its health when Telegram is out of reach, when it answers again, and that it ended when the token is refused, logging no error itself', async () => {
      const timer = new ManualTimer();
      const health = new RecordingReceiverHealth();
      const port = Number(new URL(fake.url).port);
      await fake.close();
      const inbox = new Inbox();
      await sourceOver({ timer, baseUrl: `http://127.0.0.1:${port}` }).start(inbox.deliver, health);
      await logger.logged('warn', /cannot receive messages/);
      fake = await FakeTelegramUpdatesServer.start(port);
      timer.advance(1000);
      fake.pushMessage({ text: 'up again' });
      await inbox.received(1);
      expect(health.reports[0]).toMatch(/^down: .*ECONNREFUSED/);
      expect(health.reports.at(-1)).toBe('up');

      await sources[0]!.stop();
      const refused = new RecordingReceiverHealth();
      fake.scriptPolls({ status: 401, json: { ok: false, error_code: 401, description: 'Unauthorized' } });
      await sourceOver().start(new Inbox().deliver, refused);
      await eventually(() => refused.reports.some((report) => report.startsWith('ended')), 5_000);
      expect(refused.reports).toContain(
        'ended: telegram refused the bot token (HTTP 401: Unauthorized); check platforms.telegram.bot_token (or TELEGRAM_BOT_TOKEN)',
      );
      expect(logger.lines('error')).toEqual([]);
    });

    it('stops polling, with one error line, when Telegram refuses the token while it runs', async () => {
      fake.scriptPolls({ status: 401, json: { ok: false, error_code: 401, description: 'Unauthorized' } });
      await sourceOver().start(new Inbox().deliver);
      await logger.logged('error', /refused the bot token/);
      expect(logger.lines('error')).toEqual([
        'telegram refused the bot token (HTTP 401: Unauthorized); check platforms.telegram.bot_token (or TELEGRAM_BOT_TOKEN); no Telegram messages are received until the agent is restarted with a working token',
      ]);
      fake.pushMessage({ text: 'anyone?' });
      await sources[0]!.stop();
      expect(fake.polls).toHaveLength(1);
    });
  });

  describe('stopping', () => {
    it('ends the pending long poll at once and hands nothing over after', async () => {
      const inbox = new Inbox();
      const timer = new ManualTimer();
      const source = sourceOver({ timer });
      await source.start(inbox.deliver);
      await fake.waitForHeldPoll();
      await source.stop();
      await fake.noHeldPolls();
      fake.pushMessage({ text: 'too late' });
      expect(fake.pendingUpdateIds).toHaveLength(1);
      expect(fake.polls).toHaveLength(1);
      expect(inbox.messages).toEqual([]);
    });

    it('ends a back-off wait at once', async () => {
      const timer = new ManualTimer();
      fake.scriptPolls({ status: 502, json: { ok: false, error_code: 502, description: 'Bad Gateway' } });
      const source = sourceOver({ timer });
      await source.start(new Inbox().deliver);
      await logger.logged('warn', /getUpdates failed/);
      expect(timer.pending).toBe(1);
      await source.stop();
      expect(timer.pending).toBe(0);
      expect(fake.polls).toHaveLength(1);
    });

    it('lets a hand-over under way finish and keeps its place before it resolves', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let arrived!: () => void;
      const handing = new Promise<void>((resolve) => (arrived = resolve));
      const source = sourceOver();
      let handOvers = 0;
      await source.start(async () => {
        handOvers += 1;
        arrived();
        await held;
      });
      const id = fake.pushMessage({ text: 'slow' });
      fake.pushMessage({ text: 'not handed over: the source is stopping' });
      await handing;
      let stopped = false;
      const stopping = source.stop().then(() => (stopped = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(stopped).toBe(false);
      release();
      await stopping;
      expect(cursors.cursors.get('telegram')).toBe(String(id + 1));
      expect(handOvers).toBe(1);
      expect(fake.polls).toHaveLength(1);
    });
  });

  describe('typing', () => {
    it('sends the typing action to the chat, and to the topic when there is one', async () => {
      const source = sourceOver();
      await source.typing({ platform: 'telegram', chatId: '-1009876543210', threadId: '17' });
      await source.typing({ platform: 'telegram', chatId: '777', threadId: null });
      expect(fake.chatActions).toEqual([
        { chat_id: '-1009876543210', action: 'typing', message_thread_id: 17 },
        { chat_id: '777', action: 'typing' },
      ]);
    });

    it('costs nothing but the sign when Telegram cannot be reached', async () => {
      const source = sourceOver();
      await fake.close();
      await expect(source.typing({ platform: 'telegram', chatId: '777', threadId: null })).resolves.toBeUndefined();
    });
  });
});
