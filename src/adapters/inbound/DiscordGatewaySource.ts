import type { WebSocket } from 'ws';
import type { InboundChatSource, InboundCursorStore, ReceiverHealth } from '../../application/ports/InboundChat.js';
import type { Logger } from '../../application/ports/Logger.js';
import { PlatformSendError } from '../../application/ports/PlatformSender.js';
import type { Timer } from '../../application/ports/Timer.js';
import type { ConversationKey, InboundMessage } from '../../domain/chat/inboundMessage.js';
import { errorText } from '../../domain/errors.js';
import { apiRoot, PlatformHttp } from '../delivery/platformHttp.js';
import { platformSettings, type PlatformSettings } from '../delivery/PlatformSettings.js';

const PLATFORM = 'discord';
export const DISCORD_API_BASE = 'https://discord.com/api/v10';

/** GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT (privileged: switched on in the Developer Portal). */
export const DISCORD_INTENTS = (1 << 9) | (1 << 12) | (1 << 15);

/**
 * How this source closes a connection it gives up on, and at stop(): any code but 1000 and 1001,
 * which would end the session, so that the next connection (or the next run) can resume it and
 * be sent what it missed.
 */
const RESUMABLE_CLOSE = 4000;
/** Gateway close codes after which reconnecting cannot help: what to fix, in one sentence each. */
const FATAL_CLOSES: Record<number, (settings: PlatformSettings) => string> = {
  4004: (settings) => `Discord refused the bot token (gateway close code 4004, authentication failed); check ${settings.where('bot_token')}.`,
  4010: () => 'Discord refused the shard of the gateway connection (close code 4010, invalid shard); this agent connects as one shard, so update agent.',
  4011: () =>
    'Discord requires this bot to shard its gateway connection (close code 4011, sharding required) because it is in too many servers for one connection, which agent does not support.',
  4012: () => 'Discord no longer accepts gateway API version 10 (close code 4012, invalid API version); update agent.',
  4013: () => 'Discord refused the gateway intents agent asks for (close code 4013, invalid intents); update agent.',
  4014: () =>
    'Discord refused the Message Content intent (gateway close code 4014, disallowed intents); turn on "Message Content Intent" under Bot > Privileged Gateway Intents for this application in the Discord Developer Portal (https://discord.com/developers/applications); the gateway connects again by itself, at most a minute later.',
};
/** Close codes whose session cannot be resumed: reconnect and identify afresh. */
const NEW_SESSION_CLOSES = new Set([4007, 4009]);
/** Message types a person writes: DEFAULT and REPLY (joins, pins, thread notices … are not). */
const PERSON_MESSAGE_TYPES = new Set([0, 19]);
const MAX_BACKOFF_MS = 60_000;
/** A resume address that cannot even be reached this often in a row is given up for a new session. */
const RESUME_ATTEMPTS = 3;
/** How long stop() waits for Discord to answer the closing handshake before dropping the socket. */
const CLOSE_WAIT_MS = 2_000;
// Discord asks every HTTP client to identify itself in this form.
const USER_AGENT = 'DiscordBot (agent, 0.1)';

export interface DiscordGatewayOptions {
  /** The bot token (`platforms.discord.bot_token`, DISCORD_BOT_TOKEN). */
  botToken: string;
  /** The REST API root, `https://discord.com/api/v10` by default (a fake's for tests). */
  baseUrl?: string;
  /** How long one REST call or the WebSocket handshake may take, in seconds; default 10. */
  timeoutSeconds?: number;
  logger: Logger;
  /** Heartbeats, reconnect back-off and retries wait on it. */
  timer: Timer;
  /** Keeps the session id and sequence under `discord`, so that a restart resumes the session. */
  cursors: InboundCursorStore;
  /** A number in [0, 1): the first heartbeat's jitter and the pause after an invalid session; Math.random by default. */
  random?: () => number;
}

/** The Discord Gateway over a WebSocket: see DiscordGatewaySource. */
export function createDiscordGatewaySource(options: DiscordGatewayOptions): InboundChatSource {
  return new DiscordGatewaySource(options);
}

/** What the cursor store keeps under `discord`: the session to resume and how far it was handled. */
interface StoredSession {
  session_id: string;
  resume_gateway_url: string;
  /** The bot's user id: a resumed session gets no READY to learn it from. */
  user_id: string;
  /** The sequence of the last dispatch handled (a message handed over, or one not for the bot). */
  seq: number;
}

interface Session {
  id: string;
  resumeUrl: string;
  userId: string;
}

interface GatewayPayload {
  op: number;
  d?: any;
  s?: number | null;
  t?: string | null;
}

/** What to do after a connection ended. */
type Ending =
  | {
      kind: 'resume' | 'identify';
      /** The wait before the next attempt; the back-off when absent. */
      delayMs?: number;
      /** Why it ended, when that is an outage (a drop, a refusal to connect), for the log. */
      outage?: string;
      /** A resume address that could not be reached. */
      unreachableResume?: boolean;
    }
  | { kind: 'fatal'; sentence: string };

interface Connection {
  socket: WebSocket;
  /** The gateway's origin, for the log. */
  address: string;
  mode: 'identify' | 'resume';
  /** Decided by a payload (Reconnect, Invalid Session) or a missed heartbeat ACK before the socket closed. */
  ending: Ending | null;
  acked: boolean;
  hello: boolean;
  /** Whether READY or RESUMED came on it. */
  ready: boolean;
  error: unknown;
  heartbeats: AbortController;
  /** Ends the wait for Hello once it came or the socket closed. */
  helloWait: AbortController;
  closed: Promise<void>;
}

/** One dispatch in arrival order, and the message in it for the bot, if any. */
interface Dispatch {
  seq: number;
  session: string | null;
  message: InboundMessage | null;
  /** Written to the cursor store at once (READY: a new session to resume). */
  checkpoint: boolean;
}

/**
 * Receives Discord messages over the Gateway (https://discord.com/developers/docs/events/gateway),
 * API v10, JSON: Identify with GUILD_MESSAGES, DIRECT_MESSAGES and MESSAGE_CONTENT, heartbeats on
 * the Timer, and Resume (on `resume_gateway_url`, with the last sequence) after a dropped
 * connection, a Reconnect or a missed heartbeat ACK, so that Discord replays what was sent
 * meanwhile. Its session id and the sequence of the last dispatch handled are kept in the cursor
 * store, so a restart resumes too, as long as Discord still holds the session (briefly: after
 * that a new session starts, and what was sent in between is not replayed).
 *
 * For the bot: direct messages, and in servers the messages that mention it or reply to it;
 * never a bot's or a webhook's, never system messages. A thread is a channel of its own in
 * Discord, so a message in a thread has the thread's id as `chatId` and no `threadId`, and the
 * answer is posted into the thread.
 */
export class DiscordGatewaySource implements InboundChatSource {
  readonly platform = PLATFORM;
  private readonly settings: PlatformSettings;
  private readonly http: PlatformHttp;
  private readonly logger: Logger;
  private readonly timer: Timer;
  private readonly cursors: InboundCursorStore;
  private readonly random: () => number;
  private deliver: ((message: InboundMessage) => Promise<void>) | null = null;
  private session: Session | null = null;
  /** The last sequence received: what heartbeats and an in-process Resume carry. */
  private receivedSeq: number | null = null;
  /** The last sequence of the current session whose dispatch was handled: what the cursor keeps. */
  private handledSeq: number | null = null;
  /** Whether handledSeq moved on since the cursor was last written. */
  private dirty = false;
  private writes: Promise<void> = Promise.resolve();
  private connection: Connection | null = null;
  private readonly queue: Dispatch[] = [];
  /** The hand-over of queued dispatches under way, if any. */
  private draining: Promise<void> | null = null;
  /** Connections in a row that ended before Discord acknowledged a heartbeat on a ready one. */
  private failures = 0;
  private resumeMisses = 0;
  private outage: { since: number } | null = null;
  private everConnected = false;
  /** A session was lost (expired, invalid): the next READY says what was not replayed. */
  private sessionLost = false;
  private stopping = false;
  private readonly abort = new AbortController();
  private startup: { resolve: () => void; reject: (error: Error) => void } | null = null;
  /** Told where the connection stands; null: nobody listens, and a refusal while running is logged here. */
  private health: ReceiverHealth | null = null;

  constructor(options: DiscordGatewayOptions) {
    const section: Record<string, string> = { bot_token: options.botToken, base_url: options.baseUrl ?? DISCORD_API_BASE };
    if (options.timeoutSeconds !== undefined) section.timeout_seconds = String(options.timeoutSeconds);
    this.settings = platformSettings(PLATFORM, section, {}, {});
    this.http = new PlatformHttp(this.settings, ['bot_token']);
    this.logger = options.logger;
    this.timer = options.timer;
    this.cursors = options.cursors;
    this.random = options.random ?? Math.random;
  }

  async start(deliver: (message: InboundMessage) => Promise<void>, health?: ReceiverHealth): Promise<void> {
    if (this.deliver) throw new Error('The Discord gateway source is already started.');
    this.health = health ?? null;
    // Without a token there is nothing to connect as: "discord needs platforms.discord.bot_token (or DISCORD_BOT_TOKEN)."
    this.settings.require('bot_token');
    this.deliver = deliver;
    await this.restoreSession();
    const started = new Promise<void>((resolve, reject) => (this.startup = { resolve, reject }));
    void this.run().catch((error: unknown) => this.fail(`The Discord gateway source failed (${errorText(error)}).`));
    return started;
  }

  async stop(): Promise<void> {
    if (this.stopping) return this.writes;
    this.stopping = true;
    this.abort.abort();
    this.settleStartup();
    const connection = this.connection;
    if (connection) await this.close(connection);
    // A deliver under way is let finish, so that a message handed over is not handed over again.
    await this.draining;
    if (this.dirty) this.writeCursor();
    await this.writes;
  }

  /** `POST /channels/{id}/typing` (https://discord.com/developers/docs/resources/channel#trigger-typing-indicator); it shows for about 10 s. */
  async typing(conversation: ConversationKey): Promise<void> {
    const channelId = conversation.threadId ?? conversation.chatId;
    try {
      const answer = await this.http.call({
        url: `${apiRoot(this.settings.require('base_url'))}/channels/${encodeURIComponent(channelId)}/typing`,
        method: 'POST',
        headers: this.headers(),
      });
      if (answer.status >= 300) this.logger.debug(`Discord did not show typing in channel ${channelId} (HTTP ${answer.status}: ${this.http.clean(answer.text)})`);
    } catch (error) {
      // Only a sign while a turn runs: a failure to show it never holds up the answer.
      this.logger.debug(`Discord did not show typing in channel ${channelId} (${errorText(error)})`);
    }
  }

  // --- connecting ---------------------------------------------------------------------------

  private async run(): Promise<void> {
    let mode: 'identify' | 'resume' = this.session ? 'resume' : 'identify';
    let delayMs = 0;
    while (!this.stopping) {
      if (delayMs > 0) await this.timer.wait(delayMs, this.abort.signal, { background: true });
      if (this.stopping) return;
      const ending = await this.connect(mode === 'resume' && this.session ? 'resume' : 'identify');
      if (this.stopping) return;
      if (ending.kind === 'fatal') return this.fail(ending.sentence);
      this.resumeMisses = ending.unreachableResume ? this.resumeMisses + 1 : 0;
      if (this.resumeMisses >= RESUME_ATTEMPTS) this.loseSession('The Discord gateway could not reach the address Discord gave to resume the session');
      if (ending.outage) this.noteOutage(ending.outage);
      mode = ending.kind;
      delayMs = ending.delayMs ?? this.backoff();
    }
  }

  /** One connection, from finding the address to the socket's close; resolves with what to do next. */
  private async connect(mode: 'identify' | 'resume'): Promise<Ending> {
    let url: string;
    if (mode === 'resume') {
      url = this.session!.resumeUrl;
    } else {
      const found = await this.gatewayAddress();
      if (typeof found !== 'string') return found;
      url = found;
    }
    const { WebSocket: Socket } = await loadWs();
    if (this.stopping) return { kind: mode };
    let socket: WebSocket;
    try {
      socket = new Socket(gatewayUrl(url), { handshakeTimeout: this.settings.timeoutMs });
    } catch (error) {
      if (mode === 'resume') this.loseSession('The stored address to resume the Discord gateway session is not usable');
      return { kind: 'identify', outage: `the Discord gateway address ${JSON.stringify(url)} is not usable (${errorText(error)})` };
    }
    return new Promise<Ending>((resolve) => {
      let markClosed: () => void = () => {};
      const connection: Connection = {
        socket,
        address: new URL(url).origin,
        mode,
        ending: null,
        acked: true,
        hello: false,
        ready: false,
        error: null,
        heartbeats: new AbortController(),
        helloWait: new AbortController(),
        closed: new Promise<void>((done) => (markClosed = done)),
      };
      this.connection = connection;
      socket.on('open', () => void this.awaitHello(connection));
      socket.on('message', (data) => this.onPayload(connection, String(data)));
      socket.on('error', (error) => (connection.error ??= error));
      socket.on('close', (code, reason) => {
        connection.heartbeats.abort();
        connection.helloWait.abort();
        if (this.connection === connection) this.connection = null;
        markClosed();
        resolve(this.endingOf(connection, code, reason.toString('utf8')));
      });
    });
  }

  /** `GET /gateway/bot` (https://discord.com/developers/docs/events/gateway#get-gateway-bot): the address to identify on. */
  private async gatewayAddress(): Promise<string | Ending> {
    let answer;
    try {
      answer = await this.http.call({ url: `${apiRoot(this.settings.require('base_url'))}/gateway/bot`, headers: this.headers() });
    } catch (error) {
      return { kind: 'identify', outage: errorText(error) };
    }
    const body = (answer.json ?? {}) as { url?: unknown; message?: unknown; session_start_limit?: { remaining?: unknown; reset_after?: unknown } };
    if (answer.status === 401) {
      const said = typeof body.message === 'string' ? body.message : answer.text;
      return { kind: 'fatal', sentence: `Discord refused the bot token (HTTP 401: ${this.http.clean(said)}); check ${this.settings.where('bot_token')}.` };
    }
    if (answer.status !== 200 || typeof body.url !== 'string' || body.url === '') {
      return { kind: 'identify', outage: `Discord answered GET /gateway/bot with HTTP ${answer.status} (${this.http.clean(answer.text) || 'empty answer'})` };
    }
    const limit = body.session_start_limit;
    if (limit?.remaining === 0 && typeof limit.reset_after === 'number') {
      return { kind: 'identify', delayMs: limit.reset_after, outage: `Discord allows no more new gateway sessions for this bot for ${Math.ceil(limit.reset_after / 60_000)} min` };
    }
    return body.url;
  }

  /** A connection on which Discord says nothing is dropped after the timeout, as an outage. */
  private async awaitHello(connection: Connection): Promise<void> {
    const { signal } = connection.helloWait;
    await this.timer.wait(this.settings.timeoutMs, signal, { background: true });
    if (signal.aborted) return;
    connection.ending = {
      kind: this.session ? 'resume' : 'identify',
      outage: `the Discord gateway at ${connection.address} sent no Hello within ${this.settings.timeoutMs / 1000} s`,
      unreachableResume: connection.mode === 'resume',
    };
    connection.socket.terminate();
  }

  private endingOf(connection: Connection, code: number, reason: string): Ending {
    if (connection.ending) return connection.ending;
    const fatal = FATAL_CLOSES[code];
    if (fatal) return { kind: 'fatal', sentence: fatal(this.settings) };
    const said = reason ? `: ${this.http.clean(reason)}` : '';
    if (NEW_SESSION_CLOSES.has(code)) {
      this.loseSession(`Discord ended the session (close code ${code}${said})`);
      return { kind: 'identify', outage: `Discord closed the gateway connection (code ${code}${said})` };
    }
    const next = this.session ? 'resume' : 'identify';
    if (!connection.hello) {
      const why = connection.error ? describeSocketError(connection.error) : `closed with code ${code}${said}`;
      return { kind: next, outage: `the WebSocket to ${connection.address} failed: ${this.http.clean(why)}`, unreachableResume: connection.mode === 'resume' };
    }
    return { kind: next, outage: `Discord closed the gateway connection (code ${code}${said})` };
  }

  private backoff(): number {
    const delay = this.failures === 0 ? 0 : Math.min(1000 * 2 ** (this.failures - 1), MAX_BACKOFF_MS);
    this.failures += 1;
    return delay;
  }

  /** Closes a connection so that its session stays resumable; resolves once it is closed. */
  private async close(connection: Connection): Promise<void> {
    const { socket } = connection;
    if (socket.readyState === socket.CONNECTING) socket.terminate();
    else if (socket.readyState === socket.OPEN) socket.close(RESUMABLE_CLOSE, 'reconnecting');
    const gaveUp = new AbortController();
    const late = this.timer.wait(CLOSE_WAIT_MS, gaveUp.signal, { background: true }).then(() => {
      if (!gaveUp.signal.aborted) socket.terminate();
    });
    await connection.closed;
    gaveUp.abort();
    await late;
  }

  // --- the protocol ---------------------------------------------------------------------------

  private onPayload(connection: Connection, data: string): void {
    let payload: GatewayPayload;
    try {
      payload = JSON.parse(data) as GatewayPayload;
    } catch {
      this.logger.debug('Discord gateway sent a payload that is not JSON; ignored');
      return;
    }
    if (typeof payload.s === 'number') this.receivedSeq = payload.s;
    switch (payload.op) {
      case 10:
        return this.hello(connection, payload.d);
      case 11:
        connection.acked = true;
        if (connection.ready) this.failures = 0;
        return;
      case 1:
        return this.heartbeat(connection);
      case 7:
        this.logger.debug('Discord asked the gateway connection to reconnect; resuming');
        return this.endWith(connection, { kind: this.session ? 'resume' : 'identify', delayMs: 0 });
      case 9:
        return this.invalidSession(connection, payload.d === true);
      case 0:
        return this.dispatch(connection, payload);
    }
  }

  private hello(connection: Connection, d: any): void {
    connection.hello = true;
    connection.helloWait.abort();
    const interval = typeof d?.heartbeat_interval === 'number' && d.heartbeat_interval > 0 ? d.heartbeat_interval : 41_250;
    void this.heartbeats(connection, interval);
    const token = this.settings.require('bot_token');
    if (connection.mode === 'resume' && this.session) {
      this.send(connection, { op: 6, d: { token, session_id: this.session.id, seq: this.receivedSeq } });
    } else {
      this.send(connection, { op: 2, d: { token, intents: DISCORD_INTENTS, properties: { os: process.platform, browser: 'agent', device: 'agent' } } });
    }
  }

  /**
   * Heartbeats every `interval`, the first after a random part of it; a heartbeat not acknowledged
   * by the next one means a dead connection, which is dropped and resumed.
   */
  private async heartbeats(connection: Connection, interval: number): Promise<void> {
    const { signal } = connection.heartbeats;
    await this.timer.wait(Math.floor(interval * this.random()), signal, { background: true });
    while (!signal.aborted) {
      if (!connection.acked) {
        connection.ending = { kind: this.session ? 'resume' : 'identify', delayMs: 0, outage: 'Discord stopped acknowledging gateway heartbeats' };
        connection.socket.terminate();
        return;
      }
      connection.acked = false;
      this.heartbeat(connection);
      if (this.dirty) this.writeCursor();
      await this.timer.wait(interval, signal, { background: true });
    }
  }

  private heartbeat(connection: Connection): void {
    this.send(connection, { op: 1, d: this.receivedSeq });
  }

  /** Op 9: resume when Discord says the session may be, else identify afresh after 1–5 s. */
  private invalidSession(connection: Connection, resumable: boolean): void {
    if (resumable && this.session) return this.endWith(connection, { kind: 'resume', delayMs: 0 });
    if (connection.mode === 'resume') this.loseSession('Discord could not resume the previous gateway session');
    else this.loseSession('Discord invalidated the gateway session');
    this.endWith(connection, { kind: 'identify', delayMs: 1000 + Math.floor(this.random() * 4000) });
  }

  private endWith(connection: Connection, ending: Ending): void {
    connection.ending = ending;
    connection.heartbeats.abort();
    void this.close(connection);
  }

  private dispatch(connection: Connection, payload: GatewayPayload): void {
    const seq = typeof payload.s === 'number' ? payload.s : null;
    switch (payload.t) {
      case 'READY': {
        const d = payload.d ?? {};
        this.session = { id: String(d.session_id), resumeUrl: String(d.resume_gateway_url), userId: String(d.user?.id) };
        this.handledSeq = null;
        this.connected(connection, 'new');
        if (seq !== null) this.enqueue({ seq, session: this.session.id, message: null, checkpoint: true });
        return;
      }
      case 'RESUMED':
        this.connected(connection, 'resumed');
        break;
      case 'MESSAGE_CREATE':
        if (seq !== null) this.enqueue({ seq, session: this.session?.id ?? null, message: this.forTheBot(payload.d), checkpoint: false });
        return;
    }
    if (seq !== null) this.enqueue({ seq, session: this.session?.id ?? null, message: null, checkpoint: false });
  }

  private connected(connection: Connection, how: 'new' | 'resumed'): void {
    connection.ready = true;
    const lost = how === 'new' && this.sessionLost;
    this.sessionLost = false;
    const replay = how === 'resumed' ? 'resumed the session, so messages sent meanwhile follow' : 'started a new session';
    const notReplayed = lost ? '; messages sent to the bot while it had no session are not replayed (Discord keeps a session only briefly)' : '';
    if (this.outage) {
      const seconds = Math.round((this.timer.monotonicNow() - this.outage.since) / 1000);
      this.logger.info(`Discord gateway connection is back after ${seconds} s (${replay})${notReplayed}`);
      this.outage = null;
    } else if (!this.everConnected) {
      this.logger.info(`Discord gateway connected (${how === 'resumed' ? 'resumed the previous session' : 'new session'})${notReplayed}`);
    } else if (lost) {
      this.logger.info(`Discord gateway started a new session${notReplayed}`);
    }
    this.everConnected = true;
    this.health?.up();
    this.settleStartup();
  }

  private noteOutage(why: string): void {
    if (this.outage) {
      this.logger.debug(`Discord gateway still unreachable: ${why}`);
    } else {
      this.outage = { since: this.timer.monotonicNow() };
      this.logger.warn(`${this.everConnected ? 'Discord gateway connection lost' : 'Discord gateway could not connect'} (${why}); reconnecting`);
    }
    this.health?.down(`the Discord gateway connection is down (${why})`);
    // start() is under way: it keeps reconnecting in the background.
    this.settleStartup();
  }

  private loseSession(why: string): void {
    if (!this.session) return;
    this.logger.info(`${why}; starting a new one`);
    this.session = null;
    this.receivedSeq = null;
    this.handledSeq = null;
    this.sessionLost = true;
  }

  private fail(sentence: string): void {
    this.stopping = true;
    this.abort.abort();
    if (this.startup) {
      const { reject } = this.startup;
      this.startup = null;
      reject(new PlatformSendError('refused', sentence));
    } else if (this.health) {
      this.health.ended(sentence);
    } else {
      this.logger.error(sentence);
    }
  }

  private settleStartup(): void {
    const startup = this.startup;
    this.startup = null;
    startup?.resolve();
  }

  private send(connection: Connection, payload: GatewayPayload): void {
    if (connection.socket.readyState === connection.socket.OPEN) connection.socket.send(JSON.stringify(payload));
  }

  // --- messages -------------------------------------------------------------------------------

  /** The message as handed over, when it is for the bot: see the class comment. */
  private forTheBot(d: any): InboundMessage | null {
    const botId = this.session?.userId;
    const author = d?.author;
    if (!botId || typeof author?.id !== 'string' || typeof d.id !== 'string' || typeof d.channel_id !== 'string') return null;
    if (author.bot === true || author.system === true || d.webhook_id !== undefined || author.id === botId) return null;
    if (!PERSON_MESSAGE_TYPES.has(d.type ?? 0)) return null;
    const content = typeof d.content === 'string' ? d.content : '';
    const direct = d.guild_id === undefined || d.guild_id === null;
    const mentioned = (Array.isArray(d.mentions) && d.mentions.some((user: any) => user?.id === botId)) || content.includes(`<@${botId}>`) || content.includes(`<@!${botId}>`);
    const repliesToBot = d.referenced_message?.author?.id === botId;
    if (!direct && !mentioned && !repliesToBot) return null;
    const text = content.replace(new RegExp(`[ \\t]*<@!?${escapeRegExp(botId)}>[ \\t]*`, 'g'), ' ').trim();
    if (text === '') return null;
    const name = typeof author.global_name === 'string' && author.global_name !== '' ? author.global_name : author.username;
    return {
      conversation: { platform: PLATFORM, chatId: d.channel_id, threadId: null },
      userId: author.id,
      userName: typeof name === 'string' && name !== '' ? name : null,
      messageId: d.id,
      text,
    };
  }

  private enqueue(dispatch: Dispatch): void {
    this.queue.push(dispatch);
    this.draining ??= this.drain();
  }

  /**
   * Hands messages over one at a time, in arrival order, each before the cursor moves past it.
   * Once stopping, it finishes the hand-over under way (and records it) and takes no other.
   */
  private async drain(): Promise<void> {
    // Goes on after `draining` is set, and clears it in the same step as it finds the queue empty.
    await Promise.resolve();
    try {
      while (this.queue.length > 0 && !this.stopping) {
        const dispatch = this.queue.shift()!;
        if (dispatch.message && !(await this.handOver(dispatch.message))) return;
        if (dispatch.session === null || dispatch.session !== this.session?.id) continue;
        this.handledSeq = dispatch.seq;
        this.dirty = true;
        if (dispatch.message || dispatch.checkpoint) {
          this.writeCursor();
          await this.writes;
        }
      }
    } finally {
      this.draining = null;
    }
  }

  /** Awaits `deliver`, retrying with back-off while it fails; false when stopped first. */
  private async handOver(message: InboundMessage): Promise<boolean> {
    for (let attempt = 0; !this.stopping; attempt += 1) {
      try {
        await this.deliver!(message);
        if (attempt > 0) this.logger.info(`Discord message ${message.messageId} was handed over after ${attempt} failed attempt(s)`);
        return true;
      } catch (error) {
        if (attempt === 0) this.logger.warn(`Could not hand over Discord message ${message.messageId} (${errorText(error)}); retrying`);
        await this.timer.wait(Math.min(1000 * 2 ** attempt, MAX_BACKOFF_MS), this.abort.signal, { background: true });
      }
    }
    return false;
  }

  // --- the cursor -----------------------------------------------------------------------------

  private async restoreSession(): Promise<void> {
    let stored: string | null;
    try {
      stored = await this.cursors.get(PLATFORM);
    } catch (error) {
      this.logger.warn(`Could not read the stored Discord gateway session (${errorText(error)}); starting a new one`);
      return;
    }
    if (stored === null) return;
    const session = parseStoredSession(stored);
    if (!session) {
      this.logger.warn('The stored Discord gateway session is unreadable; starting a new one');
      return;
    }
    this.session = { id: session.session_id, resumeUrl: session.resume_gateway_url, userId: session.user_id };
    this.receivedSeq = session.seq;
    this.handledSeq = session.seq;
    this.sessionLost = false;
  }

  /** Queues a write of the session and handled sequence; writes happen one after another. */
  private writeCursor(): void {
    const session = this.session;
    const seq = this.handledSeq;
    this.dirty = false;
    if (!session || seq === null) return;
    const stored: StoredSession = { session_id: session.id, resume_gateway_url: session.resumeUrl, user_id: session.userId, seq };
    this.writes = this.writes
      .then(() => this.cursors.set(PLATFORM, JSON.stringify(stored)))
      .catch((error: unknown) => this.logger.warn(`Could not store the Discord gateway session (${errorText(error)}); a restart may start a new one`));
  }

  private headers(): Record<string, string> {
    return { authorization: `Bot ${this.settings.require('bot_token')}`, 'user-agent': USER_AGENT };
  }
}

let ws: Promise<typeof import('ws')> | null = null;

/** The `ws` package, loaded on first use so that commands that never connect do not pay for it. */
function loadWs(): Promise<typeof import('ws')> {
  return (ws ??= import('ws'));
}

/** The Gateway address with the API version and encoding: `wss://gateway.discord.gg/?v=10&encoding=json`. */
function gatewayUrl(address: string): string {
  const url = new URL(address);
  url.searchParams.set('v', '10');
  url.searchParams.set('encoding', 'json');
  return url.toString();
}

function parseStoredSession(text: string): StoredSession | null {
  try {
    const value = JSON.parse(text) as Partial<StoredSession>;
    const ok =
      typeof value.session_id === 'string' &&
      value.session_id !== '' &&
      typeof value.resume_gateway_url === 'string' &&
      /^wss?:\/\//.test(value.resume_gateway_url) &&
      typeof value.user_id === 'string' &&
      /^\d+$/.test(value.user_id) &&
      typeof value.seq === 'number' &&
      Number.isInteger(value.seq);
    return ok ? (value as StoredSession) : null;
  } catch {
    return null;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function describeSocketError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : errorText(error);
}
