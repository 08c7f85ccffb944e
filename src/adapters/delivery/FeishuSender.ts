import { createHash } from 'node:crypto';
import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { AccessTokenCache, settingsHidingToken, type IssuedToken } from './accessTokenCache.js';
import { feishuApiRootOf, receiveIdTypeOf } from './platformAddressing.js';
import {
  apiRoot,
  PlatformHttp,
  refusedSubject,
  retryAfterMs,
  type PlatformAnswer,
  type PlatformRequest,
  type RequestPurpose,
} from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** Every Feishu answer: `code` 0 and `msg` on success, the platform's error code and words otherwise. */
interface FeishuAnswer {
  code?: unknown;
  msg?: unknown;
  data?: { message_id?: unknown };
  tenant_access_token?: unknown;
  expire?: unknown;
}

/**
 * Feishu's ways of saying the access token is missing, malformed, invalid or expired. The
 * official SDK renews on 99991663/99991664/99991671; 99991661, 99991668 and 99991677 are the
 * missing and expired cases the generic error codes name. Each is worth one fresh token.
 */
const TOKEN_REFUSED = new Set([99991661, 99991663, 99991664, 99991668, 99991671, 99991677]);
/** The gateway's frequency limit (HTTP 429, or 400 on older APIs) and the 5-per-second limit of one chat or person. */
const RATE_LIMITED = new Set([99991400, 230020]);
/** Feishu runs a send with a given `uuid` at most once an hour; it takes at most 50 characters. */
const UUID_LIMIT = 50;

export interface FeishuSenderOptions {
  /** Milliseconds since the epoch, for the token's expiry; Date.now by default. */
  now?: () => number;
}

/**
 * Feishu / Lark Open Platform messaging as an app's bot (https://open.feishu.cn/document/server-docs/im-v1/message/create):
 * a part is a `text` message sent with the app's tenant access token, `POST /open-apis/im/v1/messages`
 * to a group chat (`oc_…`) or a person (`ou_…`, `on_…`), or, in a thread, `POST …/messages/{om_…}/reply`
 * with `reply_in_thread`. The token comes from `tenant_access_token/internal`, is kept until
 * shortly before the `expire` Feishu gave, and is renewed once when Feishu says it is no longer
 * valid. Every send carries the part's key as `uuid`, so a retry after a lost answer is run once.
 * Only `code` 0 with the new message's id counts as delivered.
 */
export class FeishuSender implements PlatformSender {
  readonly platform = 'feishu';
  readonly partLimit = 8000;
  private readonly http: PlatformHttp;
  private readonly tokens: AccessTokenCache;

  constructor(
    private readonly settings: PlatformSettings,
    options: FeishuSenderOptions = {},
  ) {
    this.tokens = new AccessTokenCache(() => this.issueToken(), options.now ?? Date.now);
    this.http = new PlatformHttp(settingsHidingToken(settings, this.tokens), ['app_id', 'app_secret']);
  }

  async send(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart> {
    const request = this.requestFor(to, text, idempotencyKey);
    let token = await this.tokens.get();
    let answer = await this.http.call({ ...request, headers: { authorization: `Bearer ${token}` } });
    if (this.tokenRefused(answer)) {
      this.tokens.discard(token);
      token = await this.tokens.get();
      answer = await this.http.call({ ...request, headers: { authorization: `Bearer ${token}` } });
      if (this.tokenRefused(answer)) throw this.http.refusedCredentials(this.detailOf(answer) ?? answer.text);
    }
    const reply = replyOf(answer);
    const succeeded = answer.status >= 200 && answer.status < 300;
    if (succeeded && reply.code === 0) {
      const messageId = reply.data?.message_id;
      if (typeof messageId === 'string' && messageId !== '') return { messageId };
    }
    if (succeeded && (reply.code === 0 || typeof reply.code !== 'number')) throw this.http.unconfirmed(answer);
    throw this.failure(answer);
  }

  /**
   * The tenant token request, then `GET /open-apis/bot/v3/info`
   * (https://open.feishu.cn/document/client-docs/bot-v3/obtain-bot-info): the bot's app name.
   */
  async whoAmI(): Promise<string> {
    const url = `${this.apiRoot()}/open-apis/bot/v3/info`;
    let token = await this.tokens.get();
    let answer = await this.http.call({ url, headers: { authorization: `Bearer ${token}` } });
    if (this.tokenRefused(answer)) {
      this.tokens.discard(token);
      token = await this.tokens.get();
      answer = await this.http.call({ url, headers: { authorization: `Bearer ${token}` } });
      if (this.tokenRefused(answer)) throw this.http.refusedCredentials(this.detailOf(answer) ?? answer.text);
    }
    const reply = replyOf(answer) as { code?: unknown; bot?: { app_name?: unknown; open_id?: unknown } };
    if (answer.status < 200 || answer.status >= 300 || reply.code !== 0) {
      if (answer.status < 300 && typeof reply.code !== 'number') throw this.http.unconfirmed(answer, 'check');
      throw this.failure(answer, 'check');
    }
    const name = reply.bot?.app_name;
    if (typeof name === 'string' && name !== '') return name;
    if (typeof reply.bot?.open_id === 'string' && reply.bot.open_id !== '') return `bot ${reply.bot.open_id}`;
    throw this.http.unconfirmed(answer, 'check');
  }

  private requestFor(to: ChatAddress, text: string, idempotencyKey: string): Omit<PlatformRequest, 'headers'> {
    const root = this.apiRoot();
    const body = { msg_type: 'text', content: JSON.stringify({ text }), uuid: uuidOf(idempotencyKey) };
    if (to.threadId !== null) {
      // The message id alone places the reply; the chat part of the target is for the reader.
      return { url: `${root}/open-apis/im/v1/messages/${encodeURIComponent(to.threadId)}/reply`, json: { ...body, reply_in_thread: true } };
    }
    const receiveIdType = receiveIdTypeOf(to.chatId);
    if (receiveIdType === null)
      throw new PlatformSendError(
        'refused',
        `feishu cannot address "${to.chatId}": use a chat id (oc_…), an open id (ou_…) or a union id (on_…)`,
      );
    return { url: `${root}/open-apis/im/v1/messages?receive_id_type=${receiveIdType}`, json: { receive_id: to.chatId, ...body } };
  }

  private async issueToken(): Promise<IssuedToken> {
    const answer = await this.http.call({
      url: `${this.apiRoot()}/open-apis/auth/v3/tenant_access_token/internal`,
      json: { app_id: this.settings.require('app_id'), app_secret: this.settings.require('app_secret') },
    });
    const reply = replyOf(answer);
    const token = reply.tenant_access_token;
    if (answer.status >= 200 && answer.status < 300 && reply.code === 0) {
      if (typeof token !== 'string' || token === '') {
        throw new PlatformSendError(
          'refused',
          `feishu answered the token request without a tenant_access_token (${this.http.clean(answer.text) || 'empty answer'})`,
        );
      }
      return { value: token, expiresInSeconds: typeof reply.expire === 'number' ? reply.expire : 0 };
    }
    // Rate limits and outages say nothing about the credentials; any other refusal of the one
    // request that carries nothing but the app id and secret does (10003 invalid app_id, 10014 app secret invalid).
    if (answer.status === 429 || answer.status >= 500 || RATE_LIMITED.has(reply.code as number)) throw this.failure(answer);
    throw this.http.refusedCredentials(this.detailOf(answer) ?? `HTTP ${answer.status}: ${answer.text}`);
  }

  private tokenRefused(answer: PlatformAnswer): boolean {
    return TOKEN_REFUSED.has(replyOf(answer).code as number);
  }

  /** A refusal in Feishu's words: a rate limit waits `x-ogw-ratelimit-reset`, a 5xx is retried, the rest fails at once. */
  private failure(answer: PlatformAnswer, purpose: RequestPurpose = 'send'): PlatformSendError {
    const detail = this.detailOf(answer);
    if (answer.status === 429 || RATE_LIMITED.has(replyOf(answer).code as number)) {
      const reset = Number(answer.headers.get('x-ogw-ratelimit-reset') ?? Number.NaN);
      const said = this.http.clean(`HTTP ${answer.status}: ${detail ?? answer.text}`);
      return new PlatformSendError(
        'rate_limited',
        `feishu is rate-limiting (${said})`,
        retryAfterMs(answer.headers, Number.isFinite(reset) ? reset : undefined),
      );
    }
    if (answer.status >= 400 || detail === undefined) return this.http.failure(answer, detail, undefined, purpose);
    // A 2xx carrying an error code.
    return new PlatformSendError('refused', `feishu refused ${refusedSubject(purpose)} (${this.http.clean(detail)})`);
  }

  /** `code: msg` from an answer that carries them. */
  private detailOf(answer: PlatformAnswer): string | undefined {
    const reply = replyOf(answer);
    if (typeof reply.code !== 'number') return undefined;
    return typeof reply.msg === 'string' && reply.msg !== '' ? `${reply.code}: ${reply.msg}` : String(reply.code);
  }

  private apiRoot(): string {
    const root = feishuApiRootOf(this.settings);
    if (root === null) throw new PlatformSendError('refused', `${this.settings.where('domain')} must be feishu or lark`);
    return apiRoot(root);
  }
}

function replyOf(answer: PlatformAnswer): FeishuAnswer {
  return answer.json !== null && typeof answer.json === 'object' ? (answer.json as FeishuAnswer) : {};
}

/** The part's key as Feishu's deduplication `uuid`: as it is when short enough, else a digest of it. */
function uuidOf(idempotencyKey: string): string {
  return idempotencyKey.length <= UUID_LIMIT
    ? idempotencyKey
    : createHash('sha256').update(idempotencyKey).digest('hex').slice(0, UUID_LIMIT);
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new FeishuSender(settings);
}
