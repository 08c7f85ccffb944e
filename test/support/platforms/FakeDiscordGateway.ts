import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { DISCORD_TOKEN } from './FakeDiscordServer.js';

/** The bot's own user, as READY names it. */
export const BOT_USER = { id: '1098765432109876543', username: 'agentbot', global_name: null, bot: true };
/** The privileged intent a bot must switch on in the Developer Portal to read message text. */
export const MESSAGE_CONTENT_INTENT = 1 << 15;

export interface GatewayPayload {
  op: number;
  d: any;
  s?: number | null;
  t?: string | null;
}

/** One WebSocket connection a client opened, with what it sent. */
export interface FakeGatewayConnection {
  /** Path and query the client connected to, e.g. `/?v=10&encoding=json`. */
  readonly url: string;
  readonly received: GatewayPayload[];
  /** The close code the client (or the fake) ended it with; null while open. */
  closeCode: number | null;
  readonly closed: Promise<number>;
}

interface Session {
  id: string;
  /** Every dispatch of the session, kept for a Resume to replay. */
  events: GatewayPayload[];
  seq: number;
  /** False once Discord would no longer resume it (the client closed with 1000/1001, or it expired). */
  resumable: boolean;
  live: Live | null;
}

interface Live {
  socket: WebSocket;
  record: FakeGatewayConnection & { closeCode: number | null };
  session: Session | null;
}

/**
 * The Discord Gateway (https://discord.com/developers/docs/events/gateway) on 127.0.0.1, API
 * v10, JSON encoding: Hello on connect, heartbeat ACKs, Identify answered with READY (or closed
 * with 4004 for a wrong token and 4014 when the Message Content intent is not allowed), Resume
 * replaying the session's dispatches after the client's sequence and then RESUMED (or Invalid
 * Session when the session is gone). Sessions outlive their connections unless the client
 * closed with 1000 or 1001, as Discord's do, so a test can dispatch while the client is away.
 */
export class FakeDiscordGateway {
  heartbeatInterval = 41_250;
  ackHeartbeats = true;
  /** Whether a new connection is greeted with Hello; false for a gateway that accepts and then says nothing. */
  sendHello = true;
  /** Whether the application has the Message Content intent switched on in the Developer Portal. */
  messageContentAllowed = true;
  readonly connections: FakeGatewayConnection[] = [];
  private readonly sessions = new Map<string, Session>();
  private current: Session | null = null;
  private live: Live | null = null;
  private readonly identifyRefusals: number[] = [];
  private readonly waiters: Array<() => boolean> = [];
  private server: WebSocketServer | null = null;
  private nextSession = 1;

  static async start(): Promise<FakeDiscordGateway> {
    const gateway = new FakeDiscordGateway();
    gateway.server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => gateway.server!.once('listening', () => resolve()));
    gateway.server.on('connection', (socket, request) => gateway.accept(socket, request.url ?? '/'));
    return gateway;
  }

  /** What `GET /gateway/bot` names. */
  get url(): string {
    return `ws://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /** What READY gives as `resume_gateway_url`: the same server under another path, so a test sees which one a client used. */
  get resumeUrl(): string {
    return `${this.url}/resume`;
  }

  /** The id of the session now open (or last opened), for assertions. */
  get sessionId(): string | null {
    return this.current?.id ?? null;
  }

  /** The next Identify is answered by closing the connection with `code` (4004, 4013, 4014 …). */
  refuseNextIdentify(code: number): void {
    this.identifyRefusals.push(code);
  }

  /**
   * Dispatches event `t` in the current session: sent at once while a client is connected, and
   * kept so that a Resume replays it either way. Returns its sequence number.
   */
  dispatch(t: string, d: unknown): number {
    const session = this.current;
    if (!session) throw new Error('no session to dispatch in');
    session.seq += 1;
    const payload: GatewayPayload = { op: 0, t, s: session.seq, d };
    session.events.push(payload);
    if (session.live) send(session.live.socket, payload);
    return session.seq;
  }

  /** MESSAGE_CREATE in a guild channel (or a direct message when `guild_id` is undefined in `fields`). */
  messageCreate(fields: Record<string, unknown>): number {
    return this.dispatch('MESSAGE_CREATE', {
      type: 0,
      tts: false,
      mention_everyone: false,
      mention_roles: [],
      mentions: [],
      attachments: [],
      embeds: [],
      pinned: false,
      timestamp: '2025-01-01T00:00:00.000000+00:00',
      edited_timestamp: null,
      flags: 0,
      ...fields,
    });
  }

  /** Sends op 1 Heartbeat on the open connection: Discord asking for a heartbeat at once. */
  requestHeartbeat(): void {
    send(this.requireLive().socket, { op: 1, d: null });
  }

  /** Sends op 7 Reconnect on the open connection. */
  requestReconnect(): void {
    send(this.requireLive().socket, { op: 7, d: null });
  }

  /** Sends op 9 Invalid Session; a session that may not be resumed is gone for good. */
  invalidateSession(resumable: boolean): void {
    const live = this.requireLive();
    if (!resumable && live.session) live.session.resumable = false;
    send(live.socket, { op: 9, d: resumable });
  }

  /** Discord forgets every session, as after a client stayed away too long. */
  expireSessions(): void {
    for (const session of this.sessions.values()) session.resumable = false;
  }

  /** Closes the open connection from the server's side with `code`. */
  async dropConnection(code = 4000, reason = ''): Promise<void> {
    const live = this.requireLive();
    live.socket.close(code, reason);
    await live.record.closed;
  }

  /** Every payload clients sent with opcode `op`, across connections, in order. */
  sent(op: number): GatewayPayload[] {
    return this.connections.flatMap((connection) => connection.received.filter((payload) => payload.op === op));
  }

  /** Resolves with the `count`-th payload of opcode `op` clients sent (1-based), once it came. */
  waitForPayload(op: number, count = 1): Promise<GatewayPayload> {
    return this.until(() => this.sent(op)[count - 1]);
  }

  /** Resolves with the `count`-th connection (1-based), once a client opened it. */
  waitForConnection(count: number): Promise<FakeGatewayConnection> {
    return this.until(() => this.connections[count - 1]);
  }

  async close(): Promise<void> {
    for (const client of this.server?.clients ?? []) client.terminate();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private until<T>(found: () => T | undefined): Promise<T> {
    return new Promise((resolve) => {
      const check = (): boolean => {
        const value = found();
        if (value === undefined) return false;
        resolve(value);
        return true;
      };
      if (!check()) this.waiters.push(check);
    });
  }

  private changed(): void {
    for (const waiter of [...this.waiters]) {
      if (waiter()) this.waiters.splice(this.waiters.indexOf(waiter), 1);
    }
  }

  private requireLive(): Live {
    if (!this.live) throw new Error('no client is connected');
    return this.live;
  }

  private accept(socket: WebSocket, url: string): void {
    let markClosed: (code: number) => void = () => {};
    const record = {
      url,
      received: [] as GatewayPayload[],
      closeCode: null as number | null,
      closed: new Promise<number>((resolve) => (markClosed = resolve)),
    };
    const live: Live = { socket, record, session: null };
    this.live = live;
    this.connections.push(record);
    socket.on('message', (data) => {
      const payload = JSON.parse(String(data)) as GatewayPayload;
      record.received.push(payload);
      this.answer(live, payload);
      this.changed();
    });
    socket.on('close', (code) => {
      record.closeCode = code;
      if (live.session) {
        if (live.session.live === live) live.session.live = null;
        // A client that closes with 1000 or 1001 ends its session; any other code keeps it resumable.
        if (code === 1000 || code === 1001) live.session.resumable = false;
      }
      if (this.live === live) this.live = null;
      markClosed(code);
      this.changed();
    });
    if (this.sendHello) send(socket, { op: 10, d: { heartbeat_interval: this.heartbeatInterval } });
    this.changed();
  }

  private answer(live: Live, payload: GatewayPayload): void {
    switch (payload.op) {
      case 1:
        if (this.ackHeartbeats) send(live.socket, { op: 11, d: null });
        return;
      case 2:
        return this.identify(live, payload.d);
      case 6:
        return this.resume(live, payload.d);
      default:
        live.socket.close(4001, 'Unknown opcode.');
    }
  }

  private identify(live: Live, d: any): void {
    const refusal = this.identifyRefusals.shift();
    if (refusal !== undefined) return live.socket.close(refusal, 'Refused.');
    if (d?.token !== DISCORD_TOKEN) return live.socket.close(4004, 'Authentication failed.');
    if (typeof d.intents !== 'number') return live.socket.close(4013, 'Invalid intent(s).');
    if ((d.intents & MESSAGE_CONTENT_INTENT) !== 0 && !this.messageContentAllowed) return live.socket.close(4014, 'Disallowed intent(s).');
    const session: Session = { id: `fakesession${this.nextSession++}`, events: [], seq: 0, resumable: true, live };
    this.sessions.set(session.id, session);
    this.current = session;
    live.session = session;
    this.dispatch('READY', {
      v: 10,
      user: BOT_USER,
      guilds: [],
      session_id: session.id,
      resume_gateway_url: this.resumeUrl,
      application: { id: BOT_USER.id, flags: 0 },
    });
  }

  private resume(live: Live, d: any): void {
    if (d?.token !== DISCORD_TOKEN) return live.socket.close(4004, 'Authentication failed.');
    const session = this.sessions.get(d.session_id);
    if (!session || !session.resumable) return send(live.socket, { op: 9, d: false });
    if (typeof d.seq !== 'number' || d.seq > session.seq) return live.socket.close(4007, 'Invalid seq.');
    if (session.live) session.live.socket.terminate();
    session.live = live;
    live.session = session;
    this.current = session;
    for (const event of session.events) if (event.s! > d.seq) send(live.socket, event);
    this.dispatch('RESUMED', null);
  }
}

function send(socket: WebSocket, payload: GatewayPayload): void {
  socket.send(JSON.stringify({ s: null, t: null, ...payload }));
}
