import type { DirectoryChannel } from '../../domain/delivery/channelDirectory.js';
import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { apiRoot, PlatformHttp, refusedSubject, type PlatformAnswer, type PlatformRequest, type RequestPurpose } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** The error body every Matrix endpoint answers with. */
interface MatrixError {
  errcode?: string;
  error?: string;
  retry_after_ms?: number;
}

const CREDENTIAL_ERRORS = new Set(['M_UNKNOWN_TOKEN', 'M_MISSING_TOKEN']);

/**
 * Matrix Client-Server API v3 (https://spec.matrix.org/latest/client-server-api/): a part is an
 * `m.room.message` event of msgtype `m.text`, sent with `PUT …/send/m.room.message/{txnId}`. The
 * idempotency key is the transaction id, so a retry after a lost answer is deduplicated by the
 * homeserver instead of posting twice. A destination is a room id (`!room:server`), a user
 * (`@user:server`, reached through a direct room found or created once) or a room alias
 * (`#alias:server`); a thread id is the event id of the thread's root (`m.thread` relation).
 */
export class MatrixSender implements PlatformSender {
  readonly platform = 'matrix';
  readonly partLimit = 4000;
  private readonly http: PlatformHttp;
  /** One direct room per user for the life of the process, so parts and retries land in the same room. */
  private readonly directRooms = new Map<string, Promise<string>>();

  constructor(private readonly settings: PlatformSettings) {
    this.http = new PlatformHttp(settings, ['access_token']);
  }

  async send(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart> {
    const roomId = await this.roomOf(to.chatId);
    const content: Record<string, unknown> = { msgtype: 'm.text', body: text };
    if (to.threadId !== null) {
      // The reply fallback lets clients without thread support show the part under the thread's root.
      content['m.relates_to'] = {
        rel_type: 'm.thread',
        event_id: to.threadId,
        is_falling_back: true,
        'm.in_reply_to': { event_id: to.threadId },
      };
    }
    const path = `/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${encodeURIComponent(idempotencyKey)}`;
    const answer = await this.call({ method: 'PUT', url: path, json: content });
    const eventId = (answer.json as { event_id?: unknown } | undefined)?.event_id;
    if (answer.status === 200 && typeof eventId === 'string' && eventId !== '') return { messageId: eventId };
    if (answer.status === 200) throw this.http.unconfirmed(answer);
    // A direct room the bot was removed from is looked up (or made) afresh on the next delivery.
    if (errcodeOf(answer) === 'M_FORBIDDEN') this.directRooms.delete(to.chatId);
    throw this.failure(answer, `; the bot is not in room ${roomId} or may not post there: invite it and have it join`);
  }

  /** Joined rooms, each named by its canonical alias, else its name, else its id. */
  async listChannels(): Promise<DirectoryChannel[]> {
    const channels: DirectoryChannel[] = [];
    for (const id of await this.joinedRooms()) {
      const alias = (await this.stateOf(id, 'm.room.canonical_alias'))?.alias;
      const name = typeof alias === 'string' && alias !== '' ? alias : (await this.stateOf(id, 'm.room.name'))?.name;
      channels.push({ id, name: typeof name === 'string' && name !== '' ? name : id });
    }
    return channels;
  }

  private async roomOf(destination: string): Promise<string> {
    if (destination.startsWith('!')) return destination;
    if (destination.startsWith('#')) {
      const answer = await this.call({ url: `/directory/room/${encodeURIComponent(destination)}` });
      if (answer.status === 404)
        throw new PlatformSendError(
          'refused',
          `matrix refused the message: unknown room alias ${destination} (${this.http.clean(`HTTP 404: ${detailOf(answer) ?? answer.text}`)})`,
        );
      return this.textField(answer, 'room_id', `the alias lookup of ${destination}`);
    }
    if (destination.startsWith('@')) {
      let room = this.directRooms.get(destination);
      if (room === undefined) {
        room = this.directRoomWith(destination);
        room.catch(() => this.directRooms.delete(destination));
        this.directRooms.set(destination, room);
      }
      return room;
    }
    throw new PlatformSendError(
      'refused',
      `matrix cannot address "${destination}": use a room id (!room:server), a user id (@user:server) or a room alias (#alias:server)`,
    );
  }

  /** The newest direct room with `user` that the bot is still in, else a new one recorded in `m.direct`. */
  private async directRoomWith(user: string): Promise<string> {
    const me = this.textField(await this.call({ url: '/account/whoami' }), 'user_id', 'whoami');
    const accountData = `/user/${encodeURIComponent(me)}/account_data/m.direct`;
    const listed = await this.call({ url: accountData });
    if (listed.status !== 200 && listed.status !== 404) throw this.failure(listed);
    const direct: Record<string, unknown> = listed.status === 200 && isRecord(listed.json) ? listed.json : {};
    const known = Array.isArray(direct[user]) ? (direct[user] as unknown[]).filter((id): id is string => typeof id === 'string') : [];
    if (known.length > 0) {
      const joined = await this.joinedRooms();
      const existing = known.filter((id) => joined.includes(id)).at(-1);
      if (existing !== undefined) return existing;
    }
    const created = await this.call({ url: '/createRoom', json: { is_direct: true, invite: [user], preset: 'trusted_private_chat' } });
    if (created.status !== 200) throw this.failure(created, `; the bot may not open a direct room with ${user}`);
    const roomId = this.textField(created, 'room_id', `createRoom for ${user}`);
    // Best effort: the room is already direct for the invited user and cached here; failing the
    // delivery now would make the retry create a second room.
    await this.call({ method: 'PUT', url: accountData, json: { ...direct, [user]: [...known, roomId] } }).catch(() => undefined);
    return roomId;
  }

  /** A room's state event content; null when the room has no such state. */
  private async stateOf(roomId: string, type: string): Promise<Record<string, unknown> | null> {
    const answer = await this.call({ url: `/rooms/${encodeURIComponent(roomId)}/state/${type}` });
    if (answer.status === 404) return null;
    if (answer.status !== 200 || !isRecord(answer.json)) throw this.failure(answer);
    return answer.json;
  }

  /** `GET /account/whoami` (Matrix client-server API): the account's user id. */
  async whoAmI(): Promise<string> {
    return this.textField(await this.call({ url: '/account/whoami' }), 'user_id', 'whoami', 'check');
  }

  private async joinedRooms(): Promise<string[]> {
    const answer = await this.call({ url: '/joined_rooms' });
    const rooms = answer.status === 200 && isRecord(answer.json) ? answer.json.joined_rooms : undefined;
    if (!Array.isArray(rooms)) throw answer.status === 200 ? this.missing(answer, 'joined_rooms', 'joined_rooms') : this.failure(answer);
    return rooms.filter((id): id is string => typeof id === 'string');
  }

  /** The text `field` of a successful answer; anything else fails the attempt. */
  private textField(answer: PlatformAnswer, field: string, what: string, purpose: RequestPurpose = 'send'): string {
    if (answer.status !== 200)
      throw this.failure(answer, purpose === 'check' ? `; check ${this.settings.where('access_token')}` : '', purpose);
    const value = isRecord(answer.json) ? answer.json[field] : undefined;
    if (typeof value !== 'string' || value === '') throw this.missing(answer, field, what);
    return value;
  }

  private missing(answer: PlatformAnswer, field: string, what: string): PlatformSendError {
    return new PlatformSendError('refused', `matrix answered ${what} without ${field} (${this.http.clean(answer.text) || 'empty answer'})`);
  }

  private call(request: PlatformRequest): Promise<PlatformAnswer> {
    return this.http.call({
      ...request,
      url: `${apiRoot(this.settings.require('homeserver'))}/_matrix/client/v3${request.url}`,
      headers: { authorization: `Bearer ${this.settings.require('access_token')}` },
    });
  }

  /** Matrix says why in `errcode`/`error`; a 403 `M_FORBIDDEN` is about the room, not the token. */
  private failure(answer: PlatformAnswer, forbiddenHint = '', purpose: RequestPurpose = 'send'): PlatformSendError {
    const errcode = errcodeOf(answer);
    const detail = detailOf(answer);
    if (errcode !== undefined && CREDENTIAL_ERRORS.has(errcode)) return this.http.refusedCredentials(`HTTP ${answer.status}: ${detail}`);
    if (errcode === 'M_FORBIDDEN')
      return new PlatformSendError(
        'refused',
        `matrix refused ${refusedSubject(purpose)} (${this.http.clean(`HTTP ${answer.status}: ${detail}`)})${forbiddenHint}`,
      );
    const retryAfterMs = (answer.json as MatrixError | undefined)?.retry_after_ms;
    return this.http.failure(answer, detail, typeof retryAfterMs === 'number' ? retryAfterMs / 1000 : undefined, purpose);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errcodeOf(answer: PlatformAnswer): string | undefined {
  const errcode = (answer.json as MatrixError | undefined)?.errcode;
  return typeof errcode === 'string' ? errcode : undefined;
}

function detailOf(answer: PlatformAnswer): string | undefined {
  const body = (isRecord(answer.json) ? answer.json : {}) as MatrixError;
  if (typeof body.errcode !== 'string') return undefined;
  return typeof body.error === 'string' ? `${body.errcode}: ${body.error}` : body.errcode;
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new MatrixSender(settings);
}
