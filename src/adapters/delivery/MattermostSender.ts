import type { ChatAddress, PlatformSendError, PlatformSender, SentPart } from '../../application/ports/PlatformSender.js';
import type { DirectoryChannel } from '../../domain/delivery/channelDirectory.js';
import { apiRoot, PlatformHttp, type PlatformAnswer, type RequestPurpose } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** Mattermost's error body (https://api.mattermost.com/#tag/errors). */
interface MattermostError {
  id?: unknown;
  message?: unknown;
}

interface MattermostChannel {
  id?: unknown;
  name?: unknown;
  type?: unknown;
}

/** Public (O) and private (P) channels have names people type after `#`; D and G are direct and group messages. */
const NAMED_CHANNEL_TYPES = new Set(['O', 'P']);

/**
 * The server sends `X-Ratelimit-Reset` as seconds until the reset, the API reference's example as
 * a Unix time; no wait is anywhere near this long, so a larger value is a Unix time.
 */
const UNIX_TIME_FLOOR_SECONDS = 1_000_000_000;

/**
 * Mattermost REST API v4 (https://api.mattermost.com): `POST /api/v4/posts` to send
 * (https://api.mattermost.com/#tag/posts/operation/CreatePost), a thread being the root post's id
 * (`root_id`), and `GET /api/v4/users/me/channels` for the channel directory
 * (https://api.mattermost.com/#tag/channels/operation/GetChannelsForUser). The idempotency key
 * goes in `pending_post_id`, which the server uses to answer a repeated post (within 30 s) with
 * the post it already made instead of a second one.
 */
export class MattermostSender implements PlatformSender {
  readonly platform = 'mattermost';
  readonly partLimit = 4000;
  private readonly http: PlatformHttp;

  constructor(
    private readonly settings: PlatformSettings,
    /** Milliseconds since the epoch, for a rate-limit reset given as a Unix time. */
    private readonly now: () => number = Date.now,
  ) {
    this.http = new PlatformHttp(settings, ['token']);
  }

  async send(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart> {
    const post: Record<string, unknown> = { channel_id: to.chatId, message: text, pending_post_id: idempotencyKey };
    if (to.threadId !== null) post.root_id = to.threadId;
    const answer = await this.http.call({ url: this.endpoint('posts'), headers: this.authorization(), json: post });
    if (isSuccess(answer)) {
      const id = (answer.json as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string' && id !== '') return { messageId: id };
      throw this.http.unconfirmed(answer);
    }
    if (answer.status === 403) {
      // Mattermost answers 403 both for a channel the account is not in and for one that does not exist.
      throw this.http.refusedCredentials(
        `HTTP 403: ${detailOf(answer) ?? 'forbidden'}; the account cannot post in channel ${to.chatId}: add it to the channel, or check the channel id`,
      );
    }
    throw this.failure(answer);
  }

  async listChannels(): Promise<DirectoryChannel[]> {
    const answer = await this.http.call({ url: this.endpoint('users/me/channels'), headers: this.authorization() });
    if (!isSuccess(answer)) throw this.failure(answer);
    if (!Array.isArray(answer.json)) throw this.http.unconfirmed(answer);
    return (answer.json as MattermostChannel[])
      .filter((channel) => typeof channel.type === 'string' && NAMED_CHANNEL_TYPES.has(channel.type))
      .filter((channel): channel is { id: string; name: string } => typeof channel.id === 'string' && typeof channel.name === 'string')
      .map(({ id, name }) => ({ id, name }));
  }

  /** `GET /api/v4/users/me`: the account's user name. */
  async whoAmI(): Promise<string> {
    const answer = await this.http.call({ url: this.endpoint('users/me'), headers: this.authorization() });
    if (!isSuccess(answer)) throw this.failure(answer, 'check');
    const username = (answer.json as { username?: unknown } | undefined)?.username;
    if (typeof username !== 'string' || username === '') throw this.http.unconfirmed(answer, 'check');
    return `@${username}`;
  }

  /** `url` is the server's address; one pasted with the `/api/v4` suffix works as well. */
  private endpoint(path: string): string {
    return `${apiRoot(this.settings.require('url')).replace(/\/api\/v4$/, '')}/api/v4/${path}`;
  }

  private authorization(): Record<string, string> {
    return { authorization: `Bearer ${this.settings.require('token')}` };
  }

  private failure(answer: PlatformAnswer, purpose: RequestPurpose = 'send'): PlatformSendError {
    return this.http.failure(answer, detailOf(answer), this.resetSeconds(answer.headers), purpose);
  }

  /** The wait `X-Ratelimit-Reset` asks for; `Retry-After`, where the server sends it, comes first. */
  private resetSeconds(headers: Headers): number | undefined {
    const header = headers.get('x-ratelimit-reset');
    const reset = header === null || header.trim() === '' ? Number.NaN : Number(header);
    if (!Number.isFinite(reset) || reset < 0) return undefined;
    return reset >= UNIX_TIME_FLOOR_SECONDS ? Math.max(0, Math.ceil(reset - this.now() / 1000)) : reset;
  }
}

function isSuccess(answer: PlatformAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

/** Mattermost's own words and its error id, for a message someone can search for. */
function detailOf(answer: PlatformAnswer): string | undefined {
  const error = (answer.json ?? {}) as MattermostError;
  if (typeof error.message !== 'string' || error.message === '') return answer.text.trim() || undefined;
  return typeof error.id === 'string' && error.id !== '' ? `${error.message} [${error.id}]` : error.message;
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new MattermostSender(settings);
}
