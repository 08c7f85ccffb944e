/**
 * The connection to the Discord Gateway under DiscordGatewaySource: the address from the REST
 * API, Identify or Resume over the WebSocket, heartbeats, and reconnecting with back-off after a
 * drop, a Reconnect, an Invalid Session or a missed heartbeat ACK, with what it logs and tells
 * `health` on the way. What becomes of each dispatch is the source's to decide.
 */
import type { WebSocket } from 'ws';
import type { ReceiverHealth } from '../../application/ports/InboundChat.js';
import type { Logger } from '../../application/ports/Logger.js';
import { PlatformSendError } from '../../application/ports/PlatformSender.js';
import type { Timer } from '../../application/ports/Timer.js';
import { errorText } from '../../domain/errors.js';
import { PlatformHttp } from '../delivery/platformHttp.js';
import { platformSettings, type PlatformSettings } from '../delivery/PlatformSettings.js';
import {
  CLOSE_WAIT_MS,
  describeSocketError,
  DISCORD_API_BASE,
  DISCORD_INTENTS,
  FATAL_CLOSES,
  gatewayAddress,
  gatewayUrl,
  loadWs,
  MAX_BACKOFF_MS,
  NEW_SESSION_CLOSES,
  PLATFORM,
  RESUMABLE_CLOSE,
  RESUME_ATTEMPTS,
  type Connection,
  type DiscordConnectionOptions,
  type Dispatch,
  type Ending,
  type GatewayPayload,
  type Session,
} from './discordGatewayProtocol.js';
import { discordMessageOf } from './discordMessages.js';

/**
 * One Discord Gateway session, kept connected and resumed, for DiscordGatewaySource to extend:
 * it takes each dispatch (enqueue) and keeps the session in the cursor store (writeCursor).
 */
export abstract class DiscordGatewayConnection {
  protected readonly settings: PlatformSettings;
  protected readonly http: PlatformHttp;
  protected readonly logger: Logger;
  protected readonly timer: Timer;
  private readonly random: () => number;
  protected session: Session | null = null;
  /** The last sequence received: what heartbeats and an in-process Resume carry. */
  protected receivedSeq: number | null = null;
  /** The last sequence of the current session whose dispatch was handled: what the cursor keeps. */
  protected handledSeq: number | null = null;
  /** Whether handledSeq moved on since the cursor was last written. */
  protected dirty = false;
  protected connection: Connection | null = null;
  /** Connections in a row that ended before Discord acknowledged a heartbeat on a ready one. */
  private failures = 0;
  private resumeMisses = 0;
  private outage: { since: number } | null = null;
  private everConnected = false;
  /** A session was lost (expired, invalid): the next READY says what was not replayed. */
  protected sessionLost = false;
  protected stopping = false;
  protected readonly abort = new AbortController();
  protected startup: { resolve: () => void; reject: (error: Error) => void } | null = null;
  /** Told where the connection stands; null: nobody listens, and a refusal while running is logged here. */
  protected health: ReceiverHealth | null = null;

  constructor(options: DiscordConnectionOptions) {
    const section: Record<string, string> = { bot_token: options.botToken, base_url: options.baseUrl ?? DISCORD_API_BASE };
    if (options.timeoutSeconds !== undefined) section.timeout_seconds = String(options.timeoutSeconds);
    this.settings = platformSettings(PLATFORM, section, {}, {});
    this.http = new PlatformHttp(this.settings, ['bot_token']);
    this.logger = options.logger;
    this.timer = options.timer;
    this.random = options.random ?? Math.random;
  }

  // --- connecting ---------------------------------------------------------------------------

  protected async run(): Promise<void> {
    let mode: 'identify' | 'resume' = this.session ? 'resume' : 'identify';
    let delayMs = 0;
    while (!this.stopping) {
      if (delayMs > 0) await this.timer.wait(delayMs, this.abort.signal, { background: true });
      if (this.stopping) return;
      const ending = await this.connect(mode === 'resume' && this.session ? 'resume' : 'identify');
      if (this.stopping) return;
      if (ending.kind === 'fatal') return this.fail(ending.sentence);
      this.resumeMisses = ending.unreachableResume ? this.resumeMisses + 1 : 0;
      if (this.resumeMisses >= RESUME_ATTEMPTS)
        this.loseSession('The Discord gateway could not reach the address Discord gave to resume the session');
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
      const found = await gatewayAddress(this.http, this.settings);
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
      return {
        kind: next,
        outage: `the WebSocket to ${connection.address} failed: ${this.http.clean(why)}`,
        unreachableResume: connection.mode === 'resume',
      };
    }
    return { kind: next, outage: `Discord closed the gateway connection (code ${code}${said})` };
  }

  private backoff(): number {
    const delay = this.failures === 0 ? 0 : Math.min(1000 * 2 ** (this.failures - 1), MAX_BACKOFF_MS);
    this.failures += 1;
    return delay;
  }

  /** Closes a connection so that its session stays resumable; resolves once it is closed. */
  protected async close(connection: Connection): Promise<void> {
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

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Discord's payloads are JSON off the wire; each field is checked where it is read
  private hello(connection: Connection, d: any): void {
    connection.hello = true;
    connection.helloWait.abort();
    const interval = typeof d?.heartbeat_interval === 'number' && d.heartbeat_interval > 0 ? d.heartbeat_interval : 41_250;
    void this.heartbeats(connection, interval);
    const token = this.settings.require('bot_token');
    if (connection.mode === 'resume' && this.session) {
      this.send(connection, { op: 6, d: { token, session_id: this.session.id, seq: this.receivedSeq } });
    } else {
      this.send(connection, {
        op: 2,
        d: { token, intents: DISCORD_INTENTS, properties: { os: process.platform, browser: 'agent', device: 'agent' } },
      });
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
        connection.ending = {
          kind: this.session ? 'resume' : 'identify',
          delayMs: 0,
          outage: 'Discord stopped acknowledging gateway heartbeats',
        };
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
        if (seq !== null)
          this.enqueue({
            seq,
            session: this.session?.id ?? null,
            message: discordMessageOf(payload.d, this.session?.userId),
            checkpoint: false,
          });
        return;
    }
    if (seq !== null) this.enqueue({ seq, session: this.session?.id ?? null, message: null, checkpoint: false });
  }

  private connected(connection: Connection, how: 'new' | 'resumed'): void {
    connection.ready = true;
    const lost = how === 'new' && this.sessionLost;
    this.sessionLost = false;
    const replay = how === 'resumed' ? 'resumed the session, so messages sent meanwhile follow' : 'started a new session';
    const notReplayed = lost
      ? '; messages sent to the bot while it had no session are not replayed (Discord keeps a session only briefly)'
      : '';
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
      this.logger.warn(
        `${this.everConnected ? 'Discord gateway connection lost' : 'Discord gateway could not connect'} (${why}); reconnecting`,
      );
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

  protected fail(sentence: string): void {
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

  protected settleStartup(): void {
    const startup = this.startup;
    this.startup = null;
    startup?.resolve();
  }

  private send(connection: Connection, payload: GatewayPayload): void {
    if (connection.socket.readyState === connection.socket.OPEN) connection.socket.send(JSON.stringify(payload));
  }

  /** Takes a dispatch, in arrival order: its message to hand over, its sequence to keep. */
  protected abstract enqueue(dispatch: Dispatch): void;

  /** Queues a write of the session and handled sequence to the cursor store. */
  protected abstract writeCursor(): void;
}
