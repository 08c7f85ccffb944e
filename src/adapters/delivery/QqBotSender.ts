import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { AccessTokenCache, settingsHidingToken, type IssuedToken } from './accessTokenCache.js';
import { apiRoot, PlatformHttp, retryAfterMs, type PlatformAnswer, type RequestPurpose } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';
import { qqbotDestination } from './platformAddressing.js';

/** The error body of QQ's OpenAPI and of its token endpoint. */
interface QqError {
  code?: number;
  err_code?: number;
  message?: string;
  trace_id?: string;
}

interface QqTokenAnswer extends QqError {
  access_token?: string;
  /** Seconds; the documentation's example gives it as text ("7200"). */
  expires_in?: string | number;
}

/** OpenAPI codes (https://bot.q.qq.com/wiki/develop/api-v2/openapi/error/error.html) saying the token is missing, wrong or expired. */
const TOKEN_REJECTED = new Set([11241, 11243, 11244]);
/** "System error, usually fine when tried once more" in QQ's own table. */
const TRANSIENT = new Set([11242, 11252, 11263, 11281]);
/** A sub-channel's write rate limit (five messages a second). */
const CHANNEL_RATE_LIMITED = 20028;
/** Accepted, but held for manual review: nothing reached the chat yet. */
const HELD_FOR_REVIEW = new Set([304023, 304024]);
/** The token endpoint's: unknown or blocked app id (100007, 10004), wrong app id or secret (100016). */
const CREDENTIALS_REFUSED = new Set([100007, 100016, 10004]);
const TOKEN_REQUESTS_TOO_FREQUENT = 100001;

/**
 * QQ Bot open platform (https://bot.q.qq.com/wiki/develop/api-v2/): an app access token from
 * `getAppAccessToken` with the app id and client secret, kept until a minute before its
 * `expires_in` (QQ issues the next one only in that last minute), and sent as
 * `Authorization: QQBot <token>`. A part is a text message (`msg_type` 0) to a group
 * (`/v2/groups/{group_openid}/messages`) or a user (`/v2/users/{openid}/messages`), or plain
 * `content` to a guild sub-channel (`/channels/{channel_id}/messages`); the message `id` QQ
 * answers with is the confirmation. A 401, or a code saying the token is invalid or expired, gets
 * one new token and the part once more.
 */
export class QqBotSender implements PlatformSender {
  readonly platform = 'qqbot';
  readonly partLimit = 4000;
  private readonly http: PlatformHttp;
  private readonly tokens: AccessTokenCache;

  constructor(
    private readonly settings: PlatformSettings,
    /** Milliseconds since the epoch, for the token's expiry. */
    now: () => number = Date.now,
  ) {
    this.tokens = new AccessTokenCache(() => this.issueToken(), now);
    this.http = new PlatformHttp(settingsHidingToken(settings, this.tokens), ['app_id', 'client_secret']);
  }

  async send(to: ChatAddress, text: string): Promise<SentPart> {
    const destination = qqbotDestination(to.chatId);
    // The preflight refuses these already; a sender used on its own must not post elsewhere either.
    if ('problem' in destination) throw new PlatformSendError('refused', destination.problem);
    if (to.threadId !== null)
      throw new PlatformSendError('refused', `qqbot has no threads; deliver to "${to.chatId}" without thread "${to.threadId}"`);
    // The sub-channel API predates msg_type and documents content alone.
    const body = destination.kind === 'channel' ? { content: text } : { content: text, msg_type: 0 };
    let token = await this.tokens.get();
    let answer = await this.post(destination.path, token, body);
    if (tokenRejected(answer)) {
      this.tokens.discard(token);
      token = await this.tokens.get();
      answer = await this.post(destination.path, token, body);
      if (tokenRejected(answer)) throw this.http.refusedCredentials(`a new access token was refused too, ${detailOf(answer)}`);
    }
    return this.confirmation(answer);
  }

  /**
   * The app token request, then `GET /users/@me`
   * (https://bot.q.qq.com/wiki/develop/api-v2/openapi/user/me.html): the bot's user name.
   */
  async whoAmI(): Promise<string> {
    const issue = () => this.issueToken('check');
    let token = await this.tokens.get(issue);
    let answer = await this.me(token);
    if (tokenRejected(answer)) {
      this.tokens.discard(token);
      token = await this.tokens.get(issue);
      answer = await this.me(token);
      if (tokenRejected(answer)) throw this.http.refusedCredentials(`a new access token was refused too, ${detailOf(answer)}`);
    }
    if (answer.status < 200 || answer.status >= 300)
      throw this.http.failure(answer, errorOf(answer).code !== undefined ? detailOf(answer) : undefined, undefined, 'check');
    const { username, id } = (answer.json ?? {}) as { username?: unknown; id?: unknown };
    if (typeof username === 'string' && username !== '') return username;
    if (typeof id === 'string' && id !== '') return `bot ${id}`;
    throw this.http.unconfirmed(answer, 'check');
  }

  private me(token: string): Promise<PlatformAnswer> {
    return this.http.call({ url: `${apiRoot(this.settings.require('base_url'))}/users/@me`, headers: { authorization: `QQBot ${token}` } });
  }

  private confirmation(answer: PlatformAnswer): SentPart {
    const reply = errorOf(answer);
    if (answer.status >= 200 && answer.status < 300) {
      const id = (answer.json as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string' && id !== '') return { messageId: id };
      if (reply.code !== undefined && HELD_FOR_REVIEW.has(reply.code)) {
        // Sending it again would queue a second copy for review.
        throw new PlatformSendError(
          'refused',
          `qqbot holds the message for review (${this.http.clean(detailOf(answer))}); it is not counted as delivered`,
        );
      }
      throw this.http.unconfirmed(answer);
    }
    const detail = reply.code !== undefined ? detailOf(answer) : undefined;
    if (reply.code === CHANNEL_RATE_LIMITED) {
      throw new PlatformSendError(
        'rate_limited',
        `qqbot is rate-limiting (${this.http.clean(`HTTP ${answer.status}: ${detail}`)})`,
        retryAfterMs(answer.headers),
      );
    }
    if (reply.code !== undefined && TRANSIENT.has(reply.code)) {
      throw new PlatformSendError('unavailable', `qqbot is unavailable (${this.http.clean(`HTTP ${answer.status}: ${detail}`)})`);
    }
    throw this.http.failure(answer, detail);
  }

  private async issueToken(purpose: RequestPurpose = 'send'): Promise<IssuedToken> {
    const answer = await this.http.call({
      url: this.settings.require('token_url'),
      json: { appId: this.settings.require('app_id'), clientSecret: this.settings.require('client_secret') },
    });
    const reply = errorOf(answer);
    const detail = reply.code !== undefined ? detailOf(answer) : undefined;
    if (answer.status === 401 || answer.status === 403 || (reply.code !== undefined && CREDENTIALS_REFUSED.has(reply.code))) {
      throw this.http.refusedCredentials(`HTTP ${answer.status}: ${detail ?? answer.text}`);
    }
    if (answer.status < 200 || answer.status >= 300) throw this.http.failure(answer, detail, undefined, purpose);
    if (reply.code === TOKEN_REQUESTS_TOO_FREQUENT)
      throw new PlatformSendError('rate_limited', `qqbot is rate-limiting token requests (${this.http.clean(detail!)})`);
    if (typeof reply.access_token !== 'string' || reply.access_token === '') {
      throw new PlatformSendError(
        'refused',
        `qqbot answered the access token request without a token (${this.http.clean(answer.text) || 'empty answer'})`,
      );
    }
    return { value: reply.access_token, expiresInSeconds: Number(reply.expires_in) || 0 };
  }

  private post(path: string, token: string, body: Record<string, unknown>): Promise<PlatformAnswer> {
    return this.http.call({
      url: `${apiRoot(this.settings.require('base_url'))}${path}`,
      headers: { authorization: `QQBot ${token}` },
      json: body,
    });
  }
}

function errorOf(answer: PlatformAnswer): QqTokenAnswer {
  return (answer.json !== null && typeof answer.json === 'object' && !Array.isArray(answer.json) ? answer.json : {}) as QqTokenAnswer;
}

function tokenRejected(answer: PlatformAnswer): boolean {
  const code = errorOf(answer).code;
  return answer.status === 401 || (code !== undefined && TOKEN_REJECTED.has(code));
}

/** `code 304003: url not allowed (trace_id …)`, as QQ said it. */
function detailOf(answer: PlatformAnswer): string {
  const reply = errorOf(answer);
  if (reply.code === undefined) return answer.text;
  const words = typeof reply.message === 'string' && reply.message !== '' ? `code ${reply.code}: ${reply.message}` : `code ${reply.code}`;
  return typeof reply.trace_id === 'string' && reply.trace_id !== '' ? `${words} (trace_id ${reply.trace_id})` : words;
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new QqBotSender(settings);
}
