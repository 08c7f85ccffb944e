import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const MATRIX_TOKEN = 'syt_ZGVsaXZlcnlib3Q_TESTtokenMatrix_0a1b2c';
export const BOT_USER = '@deliverybot:example.org';

const API = '/_matrix/client/v3';
const SEND = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\/m\.room\.message\/([^/]+)$/;

export interface FakeRoom {
  alias?: string;
  name?: string;
  /** Whether the bot is in the room; default true. */
  joined?: boolean;
}

/** One message the homeserver stored, with the transaction it came in. */
export interface StoredMessage {
  roomId: string;
  txnId: string;
  eventId: string;
  content: Record<string, unknown>;
}

const error = (status: number, errcode: string, message: string, extra: Record<string, unknown> = {}): FakeAnswer => ({
  status,
  json: { errcode, error: message, ...extra },
});

/**
 * A Matrix homeserver's Client-Server API v3 as https://spec.matrix.org/latest/client-server-api/
 * describes it, for the bot `@deliverybot:example.org`: bearer-token auth on every endpoint,
 * `PUT /rooms/{roomId}/send/m.room.message/{txnId}` deduplicated by transaction id, `M_FORBIDDEN`
 * for rooms the bot is not in, direct rooms through `m.direct` account data and `createRoom`,
 * aliases through the room directory, joined rooms and their state.
 */
export class FakeMatrixServer extends HttpFakePlatform {
  readonly platform = 'matrix';
  readonly target = 'matrix:!ops:example.org';
  readonly rooms = new Map<string, FakeRoom>([
    ['!ops:example.org', { alias: '#ops:example.org', name: 'Operations' }],
    ['!home:example.org', { name: 'Home' }],
    ['!plain:example.org', {}],
  ]);
  /** The room directory: alias → room id. */
  readonly aliases = new Map<string, string>([['#ops:example.org', '!ops:example.org']]);
  /** The bot's `m.direct` account data; null until it is first written. */
  directRooms: Record<string, string[]> | null = null;
  readonly createdRooms: Array<{ roomId: string; body: any }> = [];
  readonly messages: StoredMessage[] = [];
  /** Also send a `Retry-After` header (seconds) with a 429, as newer homeservers do. */
  retryAfterHeader = false;
  /** What an `unauthorized` failure says: a token the homeserver does not know, or none at all. */
  unauthorizedErrcode: 'M_UNKNOWN_TOKEN' | 'M_MISSING_TOKEN' = 'M_UNKNOWN_TOKEN';
  private answersToLose = 0;

  get settings(): Record<string, string> {
    return { homeserver: this.url, access_token: MATRIX_TOKEN, home_channel: '!home:example.org' };
  }

  static start(): Promise<FakeMatrixServer> {
    return new FakeMatrixServer().start();
  }

  /** The next `count` sends are stored, but the proxy in front answers 502 instead of the event id. */
  loseAnswers(count = 1): void {
    this.answersToLose += count;
  }

  /** `refused`: `M_FORBIDDEN` to `/account/whoami`; `anonymous`: an answer without `user_id`. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.method === 'GET' && request.path === `${API}/account/whoami`,
      oddity === 'refused'
        ? error(403, 'M_FORBIDDEN', 'Application service has not registered this user')
        : { status: 200, json: { device_id: 'DELIVERY', is_guest: false } },
    );
    return true;
  }

  /** Only a well-formed, authorised, first-time send into a joined room reaches the send path. */
  protected textOf(request: RecordedRequest): string | null {
    const send = request.method === 'PUT' ? SEND.exec(request.path) : null;
    if (!send || this.refusal(request) !== null || this.earlierTransaction(request) !== undefined) return null;
    return String(request.body.body);
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const [, room, txn] = SEND.exec(request.path)!;
    const eventId = `$event${messageId}`;
    this.messages.push({ roomId: decodeURIComponent(room!), txnId: decodeURIComponent(txn!), eventId, content: request.body });
    if (this.answersToLose > 0) {
      this.answersToLose -= 1;
      return { status: 502, text: '<html><body><h1>502 Bad Gateway</h1></body></html>', accepted: true };
    }
    return { status: 200, json: { event_id: eventId } };
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>, retryAfter: number): FakeAnswer {
    switch (failure) {
      case 'rate_limited': {
        const answer = error(429, 'M_LIMIT_EXCEEDED', 'Too Many Requests', { retry_after_ms: retryAfter * 1000 });
        return this.retryAfterHeader ? { ...answer, headers: { 'retry-after': String(retryAfter) } } : answer;
      }
      case 'unavailable':
        return error(500, 'M_UNKNOWN', 'Internal server error');
      case 'refused':
        return error(403, 'M_FORBIDDEN', `User ${BOT_USER} not in room !ops:example.org`);
      case 'unauthorized':
        return this.unauthorizedErrcode === 'M_MISSING_TOKEN'
          ? error(401, 'M_MISSING_TOKEN', 'Missing access token')
          : error(401, 'M_UNKNOWN_TOKEN', 'Invalid access token passed.', { soft_logout: false });
    }
  }

  protected override other(request: RecordedRequest): FakeAnswer {
    const send = request.method === 'PUT' ? SEND.exec(request.path) : null;
    if (send) {
      this.attempts += 1;
      const stored = this.earlierTransaction(request);
      return this.refusal(request) ?? { status: 200, json: { event_id: stored!.eventId } };
    }
    const unauthorised = this.unauthorised(request);
    if (unauthorised) return unauthorised;
    const path = request.path.slice(API.length).split('/').map(decodeURIComponent);
    const route = `${request.method} ${path.slice(0, 3).join('/')}`;
    if (route === 'GET /account/whoami') return { status: 200, json: { user_id: BOT_USER, device_id: 'DELIVERY', is_guest: false } };
    if (route === 'GET /joined_rooms') return { status: 200, json: { joined_rooms: this.joinedRooms() } };
    if (route === 'POST /createRoom') return this.createRoom(request.body);
    if (route === 'GET /directory/room') {
      const roomId = this.aliases.get(path[3]!);
      return roomId
        ? { status: 200, json: { room_id: roomId, servers: ['example.org'] } }
        : error(404, 'M_NOT_FOUND', `Room alias ${path[3]} not found`);
    }
    if (path[1] === 'user' && path[3] === 'account_data' && path[4] === 'm.direct') {
      if (path[2] !== BOT_USER) return error(403, 'M_FORBIDDEN', 'Cannot get account data for other users.');
      if (request.method === 'PUT') {
        this.directRooms = request.body;
        return { status: 200, json: {} };
      }
      return this.directRooms ? { status: 200, json: this.directRooms } : error(404, 'M_NOT_FOUND', 'Account data not found');
    }
    if (request.method === 'GET' && path[1] === 'rooms' && path[3] === 'state') return this.state(path[2]!, path[4]!);
    return error(404, 'M_UNRECOGNIZED', 'Unrecognized request');
  }

  private unauthorised(request: RecordedRequest): FakeAnswer | null {
    const header = request.headers.authorization;
    if (header === undefined) return error(401, 'M_MISSING_TOKEN', 'Missing access token');
    if (header !== `Bearer ${MATRIX_TOKEN}`) return error(401, 'M_UNKNOWN_TOKEN', 'Invalid access token passed.', { soft_logout: false });
    return null;
  }

  /** Why the homeserver would not store this send, or null when it would. */
  private refusal(request: RecordedRequest): FakeAnswer | null {
    const unauthorised = this.unauthorised(request);
    if (unauthorised) return unauthorised;
    if (!String(request.headers['content-type']).startsWith('application/json')) return error(400, 'M_NOT_JSON', 'Content not JSON.');
    if (request.body?.msgtype !== 'm.text' || typeof request.body?.body !== 'string')
      return error(400, 'M_BAD_JSON', 'Invalid m.text content');
    const roomId = decodeURIComponent(SEND.exec(request.path)![1]!);
    if (this.rooms.get(roomId)?.joined === false || !this.rooms.has(roomId))
      return error(403, 'M_FORBIDDEN', `User ${BOT_USER} not in room ${roomId}`);
    return null;
  }

  /** The message an earlier request with the same transaction id stored in the same room. */
  private earlierTransaction(request: RecordedRequest): StoredMessage | undefined {
    const [, room, txn] = SEND.exec(request.path)!;
    return this.messages.find((message) => message.roomId === decodeURIComponent(room!) && message.txnId === decodeURIComponent(txn!));
  }

  private joinedRooms(): string[] {
    return [...this.rooms].filter(([, room]) => room.joined !== false).map(([id]) => id);
  }

  private createRoom(body: any): FakeAnswer {
    if (body?.is_direct !== true || !Array.isArray(body.invite) || body.invite.length !== 1 || body.preset !== 'trusted_private_chat') {
      return error(400, 'M_BAD_JSON', 'Expected a direct room inviting one user');
    }
    const roomId = `!dm${this.createdRooms.length + 1}:example.org`;
    this.rooms.set(roomId, {});
    this.createdRooms.push({ roomId, body });
    return { status: 200, json: { room_id: roomId } };
  }

  private state(roomId: string, type: string): FakeAnswer {
    const room = this.rooms.get(roomId);
    if (!room || room.joined === false) return error(403, 'M_FORBIDDEN', `User ${BOT_USER} not in room ${roomId}`);
    if (type === 'm.room.canonical_alias' && room.alias) return { status: 200, json: { alias: room.alias } };
    if (type === 'm.room.name' && room.name) return { status: 200, json: { name: room.name } };
    return error(404, 'M_NOT_FOUND', 'Event not found.');
  }
}
