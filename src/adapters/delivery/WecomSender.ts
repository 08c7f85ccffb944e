import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { AccessTokenCache, settingsHidingToken, type IssuedToken } from './accessTokenCache.js';
import { apiRoot, CREDENTIALS_CHECK, PlatformHttp, type PlatformAnswer, type RequestPurpose } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';
import { wecomDestination, type WecomDestination } from './platformAddressing.js';

/** Every WeCom server API answers with these, HTTP 200 included; `errcode` 0 is success. */
interface WecomAnswer {
  errcode?: number;
  errmsg?: string;
  access_token?: string;
  expires_in?: number;
  msgid?: string;
  invaliduser?: string;
  unlicenseduser?: string;
}

/** WeCom cuts a text message's `content` after this many bytes, silently. */
export const WECOM_TEXT_BYTES = 2048;
/**
 * Parts are counted in UTF-16 code units and a unit takes at most 3 bytes in UTF-8 (CJK text
 * does), so 680 units never exceed 2048 bytes: 2040 at worst. (Other platforms take 4000; at
 * 4000 WeCom would silently cut every Chinese answer after a third of each part.)
 */
export const WECOM_PART_LIMIT = 680;

/** Global error codes (https://developer.work.weixin.qq.com/document/path/90313). */
const SYSTEM_BUSY = -1;
/** The access token is invalid (40014) or expired (42001): one new token, then the part again. */
const TOKEN_REJECTED = new Set([40014, 42001]);
/** gettoken refused the corp id or the secret, or was sent without one. */
const CREDENTIALS_REFUSED = new Set([40001, 40013, 40091, 41002, 41004]);
/** 40056 invalid agentid; 301002 a token of one app used for another. */
const AGENT_REFUSED = new Set([40056, 301002]);
/** Call frequency (45009) or concurrency (45033) over WeCom's limit. */
const RATE_LIMITED = new Set([45009, 45033]);
const UNTRUSTED_IP = 60020;
const NO_VALID_RECIPIENT = 81013;

/**
 * WeCom (企业微信) server API as a self-built app: `GET /cgi-bin/gettoken` for the access token
 * (https://developer.work.weixin.qq.com/document/path/91039), `POST /cgi-bin/appchat/send` to a
 * group chat the app created (https://developer.work.weixin.qq.com/document/path/90248) and
 * `POST /cgi-bin/message/send` for the app's message to a member
 * (https://developer.work.weixin.qq.com/document/path/90236). WeCom answers HTTP 200 with an
 * `errcode`, so the body decides: errcode 0 is the group chat's only confirmation, and a member
 * message also needs its `msgid`. The token is kept until a minute before its `expires_in`; an
 * answer that it is invalid or expired gets one new token and the part once more.
 */
export class WecomSender implements PlatformSender {
  readonly platform = 'wecom';
  readonly partLimit = WECOM_PART_LIMIT;
  private readonly http: PlatformHttp;
  private readonly tokens: AccessTokenCache;

  constructor(
    private readonly settings: PlatformSettings,
    /** Milliseconds since the epoch, for the token's expiry. */
    now: () => number = Date.now,
  ) {
    this.tokens = new AccessTokenCache(() => this.issueToken(), now);
    this.http = new PlatformHttp(settingsHidingToken(settings, this.tokens), ['corp_id', 'secret']);
  }

  async send(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart> {
    const destination = wecomDestination(to.chatId);
    // The preflight refuses these already; a sender used on its own must not post elsewhere either.
    if ('problem' in destination) throw new PlatformSendError('refused', destination.problem);
    if (to.threadId !== null)
      throw new PlatformSendError('refused', `wecom has no threads; deliver to "${to.chatId}" without thread "${to.threadId}"`);
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > WECOM_TEXT_BYTES) {
      throw new PlatformSendError(
        'refused',
        `wecom takes at most ${WECOM_TEXT_BYTES} bytes of text per message and cuts the rest; this part has ${bytes}`,
      );
    }
    const [path, body] = this.request(destination, text);
    let token = await this.tokens.get();
    let answer = await this.post(path, token, body);
    if (TOKEN_REJECTED.has(errcodeOf(answer))) {
      this.tokens.discard(token);
      token = await this.tokens.get();
      answer = await this.post(path, token, body);
      if (TOKEN_REJECTED.has(errcodeOf(answer)))
        throw this.http.refusedCredentials(`a new access token was refused too, ${detailOf(answer)}`);
    }
    return this.confirmation(answer, destination, idempotencyKey);
  }

  /**
   * The gettoken request, then `GET /cgi-bin/agent/get?agentid=`
   * (https://developer.work.weixin.qq.com/document/path/90227): the app's name in the corp.
   */
  async whoAmI(): Promise<string> {
    const agentId = this.settings.require('agent_id');
    const call = (token: string) =>
      this.http.call({ url: `${this.root()}/cgi-bin/agent/get?${new URLSearchParams({ access_token: token, agentid: agentId })}` });
    const issue = () => this.issueToken('check');
    let token = await this.tokens.get(issue);
    let answer = await call(token);
    if (TOKEN_REJECTED.has(errcodeOf(answer))) {
      this.tokens.discard(token);
      token = await this.tokens.get(issue);
      answer = await call(token);
      if (TOKEN_REJECTED.has(errcodeOf(answer)))
        throw this.http.refusedCredentials(`a new access token was refused too, ${detailOf(answer)}`);
    }
    const reply = replyOf(answer) as WecomAnswer & { name?: unknown };
    if (answer.status !== 200)
      throw this.http.failure(answer, reply.errcode !== undefined ? detailOf(answer) : undefined, undefined, 'check');
    if (reply.errcode !== 0)
      throw reply.errcode === undefined ? this.http.unconfirmed(answer, 'check') : this.refusal(answer, CREDENTIALS_CHECK);
    if (typeof reply.name !== 'string' || reply.name === '') throw this.http.unconfirmed(answer, 'check');
    return `${reply.name} (app ${agentId} in corp ${this.settings.require('corp_id')})`;
  }

  private request(destination: WecomDestination, content: string): [string, Record<string, unknown>] {
    if (destination.kind === 'chat') return ['/cgi-bin/appchat/send', { chatid: destination.chatId, msgtype: 'text', text: { content } }];
    const agentId = Number(this.settings.require('agent_id'));
    return ['/cgi-bin/message/send', { touser: destination.userId, msgtype: 'text', agentid: agentId, text: { content } }];
  }

  private confirmation(answer: PlatformAnswer, destination: WecomDestination, idempotencyKey: string): SentPart {
    const reply = replyOf(answer);
    if (answer.status !== 200) throw this.http.failure(answer, reply.errcode !== undefined ? detailOf(answer) : undefined);
    if (reply.errcode === undefined) throw this.http.unconfirmed(answer);
    if (reply.errcode !== 0) throw this.refusal(answer, 'the message');
    if (destination.kind === 'chat') {
      // appchat/send confirms with errcode 0 alone and gives the message no id; the part's own key stands in.
      return { messageId: idempotencyKey };
    }
    const missed = [reply.invaliduser, reply.unlicenseduser].filter((list) => typeof list === 'string' && list !== '').join('|');
    if (missed !== '') {
      throw new PlatformSendError(
        'refused',
        `wecom did not deliver to ${this.http.clean(missed)}: not in the app's visible range, unknown, or without a licence`,
      );
    }
    if (typeof reply.msgid !== 'string' || reply.msgid === '') throw this.http.unconfirmed(answer);
    return { messageId: reply.msgid };
  }

  private async issueToken(purpose: RequestPurpose = 'send'): Promise<IssuedToken> {
    const query = new URLSearchParams({ corpid: this.settings.require('corp_id'), corpsecret: this.settings.require('secret') });
    const answer = await this.http.call({ url: `${this.root()}/cgi-bin/gettoken?${query}` });
    const reply = replyOf(answer);
    if (answer.status !== 200)
      throw this.http.failure(answer, reply.errcode !== undefined ? detailOf(answer) : undefined, undefined, purpose);
    if (reply.errcode !== undefined && reply.errcode !== 0) throw this.refusal(answer, 'the access token request');
    if (typeof reply.access_token !== 'string' || reply.access_token === '') {
      throw new PlatformSendError(
        'refused',
        `wecom answered the access token request without a token (${this.http.clean(answer.text) || 'empty answer'})`,
      );
    }
    return { value: reply.access_token, expiresInSeconds: Number(reply.expires_in) || 0 };
  }

  /** WeCom's error code in a 200 answer, classified; `what` names what it refused. */
  private refusal(answer: PlatformAnswer, what: string): PlatformSendError {
    const errcode = errcodeOf(answer);
    const detail = this.http.clean(detailOf(answer));
    if (CREDENTIALS_REFUSED.has(errcode)) return this.http.refusedCredentials(detail);
    if (errcode === SYSTEM_BUSY) return new PlatformSendError('unavailable', `wecom is unavailable (${detail})`);
    if (RATE_LIMITED.has(errcode)) return new PlatformSendError('rate_limited', `wecom is rate-limiting (${detail})`);
    if (AGENT_REFUSED.has(errcode)) {
      return new PlatformSendError(
        'refused',
        `wecom refused ${what} (${detail}); check ${this.settings.where('agent_id')}: it must be the AgentId of the app whose secret is configured`,
      );
    }
    if (errcode === UNTRUSTED_IP) {
      return new PlatformSendError(
        'refused',
        `wecom refused ${what} (${detail}); add this server's public IP to the app's trusted IPs (企业可信IP) in the WeCom admin console`,
      );
    }
    if (errcode === NO_VALID_RECIPIENT) {
      return new PlatformSendError('refused', `wecom refused ${what} (${detail}); the member must be in the app's visible range`);
    }
    return new PlatformSendError('refused', `wecom refused ${what} (${detail})`);
  }

  private post(path: string, token: string, body: Record<string, unknown>): Promise<PlatformAnswer> {
    return this.http.call({ url: `${this.root()}${path}?access_token=${encodeURIComponent(token)}`, json: body });
  }

  private root(): string {
    return apiRoot(this.settings.require('base_url'));
  }
}

function replyOf(answer: PlatformAnswer): WecomAnswer {
  return (answer.json !== null && typeof answer.json === 'object' ? answer.json : {}) as WecomAnswer;
}

/** The errcode of an answer; NaN when it has none. */
function errcodeOf(answer: PlatformAnswer): number {
  const errcode = replyOf(answer).errcode;
  return typeof errcode === 'number' ? errcode : Number.NaN;
}

/** `errcode 86001: chatid invalid, hint: […]`, as WeCom said it. */
function detailOf(answer: PlatformAnswer): string {
  const reply = replyOf(answer);
  if (typeof reply.errcode !== 'number') return answer.text;
  return typeof reply.errmsg === 'string' && reply.errmsg !== '' ? `errcode ${reply.errcode}: ${reply.errmsg}` : `errcode ${reply.errcode}`;
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new WecomSender(settings);
}
