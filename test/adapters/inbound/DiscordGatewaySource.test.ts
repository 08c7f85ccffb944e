import type { InboundChatSource } from '../../../src/application/ports/InboundChat.js';
import type { InboundMessage } from '../../../src/domain/chat/inboundMessage.js';
import { createDiscordGatewaySource, type DiscordGatewayOptions } from '../../../src/adapters/inbound/DiscordGatewaySource.js';
import { DISCORD_INTENTS } from '../../../src/adapters/inbound/discordGatewayProtocol.js';
import { InMemoryInboundCursorStore } from '../../support/fakes/InMemoryInboundCursorStore.js';
import { eventually } from '../../support/processLiveness.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingReceiverHealth } from '../../support/fakes/RecordingReceiverHealth.js';
import { BOT_USER, FakeDiscordGateway } from '../../support/platforms/FakeDiscordGateway.js';
import { DISCORD_TOKEN, FakeDiscordServer, FOREIGN_CHANNEL, OPS } from '../../support/platforms/FakeDiscordServer.js';

/** A ManualTimer that also tells when a wait was asked for, so a test moves time only once the source waits. */
class WatchedTimer extends ManualTimer {
  readonly asked: number[] = [];
  private readonly watchers: Array<() => void> = [];

  override wait(ms: number, cancel?: AbortSignal): Promise<void> {
    this.asked.push(ms);
    for (const watcher of this.watchers.splice(0)) watcher();
    return super.wait(ms, cancel);
  }

  /** Resolves once a wait of `ms` has been asked for `count` times. */
  async untilAsked(ms: number, count = 1): Promise<void> {
    while (this.asked.filter((asked) => asked === ms).length < count) await new Promise<void>((resolve) => this.watchers.push(resolve));
  }
}

/** A RecordingLogger that tells when a line was logged. */
class WatchedLogger extends RecordingLogger {
  private readonly watchers: Array<() => void> = [];

  override error(message: string, fields?: Record<string, unknown>): void {
    super.error(message, fields);
    for (const watcher of this.watchers.splice(0)) watcher();
  }

  async untilError(): Promise<string> {
    for (;;) {
      const line = this.entries.find((entry) => entry.level === 'error');
      if (line) return line.message;
      await new Promise<void>((resolve) => this.watchers.push(resolve));
    }
  }

  lines(level: string): string[] {
    return this.entries.filter((entry) => entry.level === level).map((entry) => entry.message);
  }
}

/** What a source handed over, in order; `deliver` can be held to see that nothing moves on meanwhile. */
class Inbox {
  readonly messages: InboundMessage[] = [];
  private readonly watchers: Array<() => void> = [];
  hold: Promise<void> | null = null;
  failures = 0;

  readonly deliver = async (message: InboundMessage): Promise<void> => {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('conversation store is unavailable');
    }
    this.messages.push(message);
    for (const watcher of this.watchers.splice(0)) watcher();
    if (this.hold) await this.hold;
  };

  /** Resolves with the first `count` messages once they were handed over. */
  async count(count: number): Promise<InboundMessage[]> {
    while (this.messages.length < count) await new Promise<void>((resolve) => this.watchers.push(resolve));
    return this.messages.slice(0, count);
  }

  get texts(): string[] {
    return this.messages.map((message) => message.text);
  }
}

const ALICE = { id: '200000000000000001', username: 'alice', global_name: 'Alice A.' };
const BOB = { id: '200000000000000002', username: 'bob', global_name: null };
const OTHER_BOT = { id: '200000000000000003', username: 'ci-bot', bot: true };
const DM_CHANNEL = '300000000000000001';
let nextMessage = 1;
const messageId = () => `400000000000${String(nextMessage++).padStart(6, '0')}`;

/** A direct message to the bot (no guild_id). */
const direct = (content: string, author: Record<string, unknown> = ALICE) => ({ id: messageId(), channel_id: DM_CHANNEL, author, content });
/** A message in #general of the Ops server. */
const inGeneral = (content: string, fields: Record<string, unknown> = {}) => ({
  id: messageId(),
  channel_id: OPS.general,
  guild_id: OPS.guild,
  author: BOB,
  member: { roles: [] },
  content,
  ...fields,
});
const mentioning = (content: string, fields: Record<string, unknown> = {}) =>
  inGeneral(`<@${BOT_USER.id}> ${content}`, { mentions: [BOT_USER], ...fields });

describe('DiscordGatewaySource', () => {
  let rest: FakeDiscordServer;
  let gateway: FakeDiscordGateway;
  let timer: WatchedTimer;
  let logger: WatchedLogger;
  let cursors: InMemoryInboundCursorStore;
  let sources: InboundChatSource[];

  beforeEach(async () => {
    rest = await FakeDiscordServer.start();
    gateway = await FakeDiscordGateway.start();
    rest.gatewayUrl = gateway.url;
    timer = new WatchedTimer();
    logger = new WatchedLogger();
    cursors = new InMemoryInboundCursorStore();
    sources = [];
  });

  afterEach(async () => {
    for (const source of sources) await source.stop();
    await gateway.close();
    await rest.close();
  });

  const sourceWith = (options: Partial<DiscordGatewayOptions> = {}): InboundChatSource => {
    const source = createDiscordGatewaySource({
      botToken: DISCORD_TOKEN,
      baseUrl: rest.settings.base_url,
      logger,
      timer,
      cursors,
      random: () => 0.5,
      ...options,
    });
    sources.push(source);
    return source;
  };

  const started = async (options: Partial<DiscordGatewayOptions> = {}): Promise<{ source: InboundChatSource; inbox: Inbox }> => {
    const inbox = new Inbox();
    const source = sourceWith(options);
    await source.start(inbox.deliver);
    return { source, inbox };
  };

  const storedCursor = () => JSON.parse(cursors.cursors.get('discord') ?? 'null');
  const failureOf = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: unknown) => error as Error,
    );

  describe('connecting', () => {
    it('identifies at the address GET /gateway/bot gives, with the bot token, the message intents and its properties', async () => {
      await started();
      const [lookup] = rest.requests.filter((request) => request.path === '/api/v10/gateway/bot');
      expect(lookup!.headers.authorization).toBe(`Bot ${DISCORD_TOKEN}`);
      expect(gateway.connections[0]!.url).toBe('/?v=10&encoding=json');
      const identify = await gateway.waitForPayload(2);
      expect(identify.d).toEqual({
        token: DISCORD_TOKEN,
        intents: DISCORD_INTENTS,
        properties: { os: process.platform, browser: 'agent', device: 'agent' },
      });
      expect(DISCORD_INTENTS).toBe((1 << 9) | (1 << 12) | (1 << 15));
    });

    it('keeps the session READY gives in the cursor store, to resume after a restart', async () => {
      await started();
      await until(() => cursors.writes > 0);
      expect(storedCursor()).toEqual({
        session_id: gateway.sessionId,
        resume_gateway_url: gateway.resumeUrl,
        user_id: BOT_USER.id,
        seq: 1,
      });
    });

    it('heartbeats every heartbeat_interval, the first after a random part of it, with the last sequence it received', async () => {
      gateway.heartbeatInterval = 40_000;
      const { inbox } = await started({ random: () => 0.2 });
      expect(timer.asked.at(-1)).toBe(8_000);
      timer.advance(7_999);
      expect(timer.pending).toBe(1);
      timer.advance(1);
      expect((await gateway.waitForPayload(1, 1)).d).toBe(1);
      gateway.dispatch('GUILD_CREATE', { id: OPS.guild, name: 'Ops' });
      const seq = gateway.messageCreate(direct('ping'));
      await inbox.count(1);
      await timer.untilAsked(40_000);
      timer.advance(40_000);
      expect((await gateway.waitForPayload(1, 2)).d).toBe(seq);
    });

    it('drops a connection on which Discord sends no Hello within the timeout, and connects again', async () => {
      gateway.sendHello = false;
      const starting = sourceWith({ timeoutSeconds: 5 }).start(new Inbox().deliver);
      await timer.untilAsked(5000);
      gateway.sendHello = true;
      timer.advance(5000);
      await starting;
      await gateway.waitForPayload(2);
      expect(gateway.connections).toHaveLength(2);
      expect(logger.lines('warn')).toEqual([
        `Discord gateway could not connect (the Discord gateway at ${gateway.url} sent no Hello within 5 s); reconnecting`,
      ]);
    });

    it('answers a heartbeat request from Discord at once', async () => {
      await started();
      gateway.requestHeartbeat();
      expect((await gateway.waitForPayload(1)).d).toBe(1);
    });

    it('drops a connection whose heartbeat Discord did not acknowledge, and resumes the session on a new one', async () => {
      gateway.ackHeartbeats = false;
      await started();
      timer.advance(20_625);
      await gateway.waitForPayload(1);
      await timer.untilAsked(41_250);
      timer.advance(41_250);
      const resume = await gateway.waitForPayload(6);
      expect(resume.d).toEqual({ token: DISCORD_TOKEN, session_id: gateway.sessionId, seq: 1 });
      expect(gateway.connections[1]!.url).toBe('/resume?v=10&encoding=json');
      expect(logger.lines('warn')).toEqual([expect.stringContaining('Discord stopped acknowledging gateway heartbeats')]);
    });
  });

  describe('what is handed over', () => {
    it('hands over direct messages and the server messages that mention the bot or reply to it, with the mention taken out', async () => {
      const { inbox } = await started();
      const mention = mentioning('what broke in the nightly build?');
      gateway.messageCreate(inGeneral('lunch anyone?'));
      gateway.messageCreate(mention);
      gateway.messageCreate(inGeneral(`thanks <@!${BOT_USER.id}>, and the deploy?`));
      gateway.messageCreate(
        inGeneral('and the one before?', { type: 19, referenced_message: { id: '1', author: BOT_USER, content: 'earlier answer' } }),
      );
      gateway.messageCreate(inGeneral('agreed', { type: 19, referenced_message: { id: '2', author: ALICE, content: 'ship it' } }));
      const dm = direct('summarise the incident');
      gateway.messageCreate(dm);
      const [first, second, third, fourth] = await inbox.count(4);
      expect(first).toEqual({
        conversation: { platform: 'discord', chatId: OPS.general, threadId: null },
        userId: BOB.id,
        userName: 'bob',
        messageId: mention.id,
        text: 'what broke in the nightly build?',
      });
      expect(second!.text).toBe('thanks , and the deploy?');
      expect(third!.text).toBe('and the one before?');
      expect(fourth).toEqual({
        conversation: { platform: 'discord', chatId: DM_CHANNEL, threadId: null },
        userId: ALICE.id,
        userName: 'Alice A.',
        messageId: dm.id,
        text: 'summarise the incident',
      });
    });

    it("never hands over its own messages, other bots', webhooks', system messages or a bare mention", async () => {
      const { inbox } = await started();
      gateway.messageCreate(mentioning('from another bot', { author: OTHER_BOT }));
      gateway.messageCreate(direct('my own answer', BOT_USER));
      gateway.messageCreate(
        mentioning('from a webhook', { webhook_id: '500000000000000001', author: { id: '500000000000000001', username: 'Deploys' } }),
      );
      gateway.messageCreate(mentioning('pinned a message', { type: 6 }));
      gateway.messageCreate(inGeneral(`<@${BOT_USER.id}>`, { mentions: [BOT_USER] }));
      gateway.messageCreate(direct('the only one for the bot'));
      await inbox.count(1);
      gateway.messageCreate(direct('and this one'));
      await inbox.count(2);
      expect(inbox.texts).toEqual(['the only one for the bot', 'and this one']);
    });

    it('takes a thread as the channel it is: its id is the chat, with no thread id', async () => {
      const { inbox } = await started();
      gateway.messageCreate(mentioning('status?', { channel_id: OPS.generalThread }));
      const [message] = await inbox.count(1);
      expect(message!.conversation).toEqual({ platform: 'discord', chatId: OPS.generalThread, threadId: null });
    });

    it('hands over one message at a time, in arrival order, and moves the stored sequence only once deliver resolved', async () => {
      const { inbox } = await started();
      await until(() => cursors.writes > 0);
      let release!: () => void;
      inbox.hold = new Promise<void>((resolve) => (release = resolve));
      const firstSeq = gateway.messageCreate(direct('first'));
      const secondSeq = gateway.messageCreate(direct('second'));
      await inbox.count(1);
      gateway.requestHeartbeat(); // answered only after the second dispatch was read
      await gateway.waitForPayload(1);
      expect(inbox.texts).toEqual(['first']);
      expect(storedCursor().seq).toBeLessThan(firstSeq);
      inbox.hold = null;
      release();
      await inbox.count(2);
      await until(() => storedCursor().seq === secondSeq);
      expect(inbox.texts).toEqual(['first', 'second']);
    });

    it('keeps handing a message over while deliver fails, and logs that once', async () => {
      const { inbox } = await started();
      inbox.failures = 2;
      gateway.messageCreate(direct('please retry'));
      await timer.untilAsked(1000);
      timer.advance(1000);
      await timer.untilAsked(2000);
      timer.advance(2000);
      await inbox.count(1);
      expect(inbox.texts).toEqual(['please retry']);
      expect(logger.lines('warn')).toEqual([
        expect.stringMatching(/^Could not hand over Discord message \d+ \(conversation store is unavailable\); retrying$/),
      ]);
    });
  });

  describe('reconnecting', () => {
    it('resumes on resume_gateway_url with its sequence when Discord drops the connection, and is sent what it missed', async () => {
      const { inbox } = await started();
      const seq = gateway.messageCreate(direct('before the drop'));
      await inbox.count(1);
      await gateway.dropConnection(4000, 'Unknown error');
      gateway.messageCreate(direct('while it was away'));
      const resume = await gateway.waitForPayload(6);
      expect(resume.d).toEqual({ token: DISCORD_TOKEN, session_id: gateway.sessionId, seq });
      expect(gateway.connections[1]!.url).toBe('/resume?v=10&encoding=json');
      await inbox.count(2);
      expect(inbox.texts).toEqual(['before the drop', 'while it was away']);
      expect(gateway.sent(2)).toHaveLength(1);
      expect(logger.lines('warn')).toEqual([
        'Discord gateway connection lost (Discord closed the gateway connection (code 4000: Unknown error)); reconnecting',
      ]);
      expect(logger.lines('info')).toContainEqual(
        expect.stringMatching(/^Discord gateway connection is back after 0 s \(resumed the session/),
      );
    });

    it('reconnects and resumes when Discord sends Reconnect, keeping the session and logging no outage', async () => {
      await started();
      gateway.requestReconnect();
      await gateway.waitForPayload(6);
      expect(await gateway.connections[0]!.closed).toBe(4000);
      expect(logger.lines('warn')).toEqual([]);
    });

    it('resumes at once when an Invalid Session says the session may be resumed', async () => {
      await started();
      gateway.invalidateSession(true);
      expect((await gateway.waitForPayload(6)).d.session_id).toBe(gateway.sessionId);
    });

    it('identifies afresh on a new connection 1 to 5 s after an Invalid Session that may not be resumed', async () => {
      await started();
      const oldSession = gateway.sessionId;
      gateway.invalidateSession(false);
      await timer.untilAsked(3000);
      expect(gateway.sent(2)).toHaveLength(1);
      timer.advance(3000);
      await gateway.waitForPayload(2, 2);
      expect(gateway.connections[1]!.url).toBe('/?v=10&encoding=json');
      expect(gateway.sent(6)).toEqual([]);
      await until(() => storedCursor()?.session_id === gateway.sessionId);
      expect(gateway.sessionId).not.toBe(oldSession);
    });

    it('starts a new session when Discord ends the session with close code 4009', async () => {
      await started();
      await gateway.dropConnection(4009, 'Session timed out.');
      await gateway.waitForPayload(2, 2);
      expect(gateway.sent(6)).toEqual([]);
    });

    it('keeps trying with growing pauses while Discord cannot be reached, logs the outage once, and says when it is back', async () => {
      rest.gatewayUrl = 'ws://127.0.0.1:1';
      const { inbox } = await started();
      await timer.untilAsked(1000);
      timer.advance(1000);
      await timer.untilAsked(2000);
      expect(logger.lines('warn')).toEqual([
        expect.stringMatching(
          /^Discord gateway could not connect \(the WebSocket to ws:\/\/127\.0\.0\.1:1 failed: ECONNREFUSED\); reconnecting$/,
        ),
      ]);
      rest.gatewayUrl = gateway.url;
      timer.advance(2000);
      await gateway.waitForPayload(2);
      gateway.messageCreate(direct('hello again'));
      await inbox.count(1);
      expect(logger.lines('info')).toContainEqual('Discord gateway connection is back after 3 s (started a new session)');
    });
  });

  describe('restarts', () => {
    it('resumes the stored session: what was sent while it was down is handed over, nothing handed over before is handed over again', async () => {
      const first = await started();
      const seq = gateway.messageCreate(direct('answered before the restart'));
      await first.inbox.count(1);
      await first.source.stop();
      expect(gateway.connections[0]!.closeCode).toBe(4000);
      gateway.messageCreate(direct('sent while it was down'));

      const second = await started();
      await second.inbox.count(1);
      expect(second.inbox.texts).toEqual(['sent while it was down']);
      expect(gateway.sent(6)[0]!.d).toEqual({ token: DISCORD_TOKEN, session_id: gateway.sessionId, seq });
      expect(gateway.connections[1]!.url).toBe('/resume?v=10&encoding=json');
      expect(gateway.sent(2)).toHaveLength(1);
    });

    it('starts a new session when Discord no longer holds the stored one, and says that messages meanwhile are not replayed', async () => {
      const first = await started();
      await first.source.stop();
      gateway.expireSessions();

      const second = sourceWith();
      const starting = second.start(new Inbox().deliver);
      await timer.untilAsked(3000);
      timer.advance(3000);
      await starting;
      expect(gateway.sent(2)).toHaveLength(2);
      expect(logger.lines('info')).toContainEqual(
        'Discord gateway connected (new session); messages sent to the bot while it had no session are not replayed (Discord keeps a session only briefly)',
      );
    });

    it('identifies when the stored cursor is unreadable', async () => {
      await cursors.set('discord', '{"session_id":');
      await started();
      expect(gateway.sent(2)).toHaveLength(1);
      expect(logger.lines('warn')).toEqual(['The stored Discord gateway session is unreadable; starting a new one']);
    });
  });

  describe('refusals', () => {
    it('rejects start with one sentence naming DISCORD_BOT_TOKEN when Discord refuses the token on the gateway (4004), and stops', async () => {
      gateway.refuseNextIdentify(4004);
      const error = await failureOf(sourceWith().start(new Inbox().deliver));
      expect(error?.message).toBe(
        'Discord refused the bot token (gateway close code 4004, authentication failed); check platforms.discord.bot_token (or DISCORD_BOT_TOKEN).',
      );
      expect(gateway.connections).toHaveLength(1);
    });

    it('rejects start naming DISCORD_BOT_TOKEN, never the token, when GET /gateway/bot refuses it', async () => {
      const error = await failureOf(sourceWith({ botToken: 'MTA5.wrong.token-value' }).start(new Inbox().deliver));
      expect(error?.message).toBe(
        'Discord refused the bot token (HTTP 401: 401: Unauthorized); check platforms.discord.bot_token (or DISCORD_BOT_TOKEN).',
      );
      expect(gateway.connections).toEqual([]);
    });

    it('rejects start naming the setting when no bot token is given', async () => {
      const error = await failureOf(sourceWith({ botToken: ' ' }).start(new Inbox().deliver));
      expect(error?.message).toBe('discord needs platforms.discord.bot_token (or DISCORD_BOT_TOKEN).');
      expect(rest.requests).toEqual([]);
    });

    it('tells the operator to turn on the Message Content intent when Discord disallows it (4014)', async () => {
      gateway.messageContentAllowed = false;
      const error = await failureOf(sourceWith().start(new Inbox().deliver));
      expect(error?.message).toMatch(
        /^Discord refused the Message Content intent \(gateway close code 4014, disallowed intents\); turn on "Message Content Intent" under Bot > Privileged Gateway Intents .* Discord Developer Portal/,
      );
      expect(gateway.connections).toHaveLength(1);
    });

    it('tells its health it is up, down while reconnecting, and ended when Discord refuses the session later, logging no error itself', async () => {
      const health = new RecordingReceiverHealth();
      const source = sourceWith();
      await source.start(new Inbox().deliver, health);
      expect(health.reports).toEqual(['up']);
      await gateway.dropConnection(4014, 'Disallowed intent(s).');
      await eventually(() => health.reports.some((report) => report.startsWith('ended')), 5_000);
      expect(health.reports.at(-1)).toMatch(/^ended: Discord refused the Message Content intent/);
      expect(logger.entries.filter((entry) => entry.level === 'error')).toEqual([]);
    });

    it('logs the sentence and stops reconnecting when Discord refuses the session later', async () => {
      await started();
      await gateway.dropConnection(4014, 'Disallowed intent(s).');
      expect(await logger.untilError()).toMatch(/^Discord refused the Message Content intent/);
      expect(gateway.connections).toHaveLength(1);
    });
  });

  describe('typing and stop', () => {
    it("shows typing in the conversation's channel as the bot", async () => {
      const source = sourceWith();
      await source.typing({ platform: 'discord', chatId: OPS.generalThread, threadId: null });
      const [request] = rest.requests.filter((candidate) => candidate.path.endsWith('/typing'));
      expect(request).toMatchObject({ method: 'POST', path: `/api/v10/channels/${OPS.generalThread}/typing` });
      expect(request!.headers.authorization).toBe(`Bot ${DISCORD_TOKEN}`);
    });

    it('does not fail when Discord refuses to show typing', async () => {
      await expect(sourceWith().typing({ platform: 'discord', chatId: FOREIGN_CHANNEL, threadId: null })).resolves.toBeUndefined();
    });

    it('stop closes the connection so that the session stays resumable, and hands nothing over after', async () => {
      const { source, inbox } = await started();
      await source.stop();
      expect(gateway.connections[0]!.closeCode).toBe(4000);
      gateway.messageCreate(direct('after stop'));
      expect(inbox.messages).toEqual([]);
      expect(gateway.connections).toHaveLength(1);
      expect(timer.pending).toBe(0);
    });

    it('stop ends the pause between attempts while Discord cannot be reached', async () => {
      rest.gatewayUrl = 'ws://127.0.0.1:1';
      const { source } = await started();
      await timer.untilAsked(1000);
      await source.stop();
      expect(timer.pending).toBe(0);
    });
  });

  /** Resolves once `check` holds, looking again after every turn of the event loop (socket I/O, store writes). */
  async function until(check: () => boolean): Promise<void> {
    while (!check()) await new Promise<void>((resolve) => setImmediate(resolve));
  }
});
