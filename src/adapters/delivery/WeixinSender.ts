import { randomBytes } from 'node:crypto';
import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { apiRoot, PlatformHttp, type PlatformAnswer } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';
import { weixinAddressProblem } from './platformAddressing.js';

/** iLink's answer: `ret` 0 on success; `ret`/`errcode` not 0 with `errmsg` on an error, both as HTTP 200. */
interface IlinkAnswer {
  ret?: number;
  errcode?: number;
  errmsg?: string;
  message_id?: string | number;
}

/**
 * The protocol version this adapter's request follows: Tencent's openclaw-weixin channel 2.x,
 * whose docs/protocol.md describes the bot API. iLink reads it from `base_info` and the
 * `iLink-App-ClientVersion` header (0x00MMNNPP) for its own observability.
 */
const CHANNEL_VERSION = { major: 2, minor: 4, patch: 8 };
const ILINK_APP_ID = 'bot';
/** `message_type` of a message the bot sends, and `message_state` of one that is complete (not streaming). */
const MESSAGE_TYPE_BOT = 2;
const MESSAGE_STATE_FINISH = 2;
const ITEM_TYPE_TEXT = 1;
/** The bot's session is gone (logged out, or expired for want of use), or the token was never valid: iLink answers both alike. */
const SESSION_TIMEOUT = -14;
/** iLink's frequency limit. */
const RATE_LIMITED = -2;

/**
 * The WeChat iLink bot API (the "ClawBot" that a WeChat user binds by scanning a QR code):
 * `POST {base_url}/ilink/bot/sendmessage` with the bot token as a bearer token, as
 * https://github.com/Tencent/openclaw-weixin/blob/main/docs/protocol.md describes it. iLink
 * answers errors as HTTP 200 with a non-zero `ret` or `errcode`, and an expired session may even
 * answer `{}`, so only `ret: 0` (or a message id) without an error code counts as delivered.
 * iLink states no lifetime for the bot token and has no call to refresh it: when it answers
 * errcode -14 the bot has to be logged in again with a QR code, so that is a credentials refusal.
 */
export class WeixinSender implements PlatformSender {
  readonly platform = 'weixin';
  readonly partLimit = 2000;
  private readonly http: PlatformHttp;

  constructor(private readonly settings: PlatformSettings) {
    this.http = new PlatformHttp(settings, ['token']);
  }

  async send(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart> {
    const problem = weixinAddressProblem(to);
    if (problem !== null) throw new PlatformSendError('refused', problem);
    // The same client id on every attempt at a part, so a retry is recognisable as one on iLink's side.
    const clientId = `agent-${idempotencyKey}`;
    const answer = await this.http.call({
      url: `${apiRoot(this.settings.require('base_url'))}/ilink/bot/sendmessage`,
      headers: {
        authorization: `Bearer ${this.settings.require('token')}`,
        authorizationtype: 'ilink_bot_token',
        'x-wechat-uin': randomUin(),
        'ilink-app-id': ILINK_APP_ID,
        'ilink-app-clientversion': String((CHANNEL_VERSION.major << 16) | (CHANNEL_VERSION.minor << 8) | CHANNEL_VERSION.patch),
      },
      json: {
        msg: {
          from_user_id: '',
          to_user_id: to.chatId,
          client_id: clientId,
          message_type: MESSAGE_TYPE_BOT,
          message_state: MESSAGE_STATE_FINISH,
          item_list: [{ type: ITEM_TYPE_TEXT, text_item: { text: shownAsWritten(text) } }],
        },
        base_info: { channel_version: `${CHANNEL_VERSION.major}.${CHANNEL_VERSION.minor}.${CHANNEL_VERSION.patch}` },
      },
    });
    const reply = (isRecord(answer.json) ? answer.json : {}) as IlinkAnswer;
    if (answer.status < 200 || answer.status >= 300) throw this.http.failure(answer, saidBy(reply));
    const code = errorCodeOf(reply);
    if (code !== null) throw this.refusal(answer, code, reply);
    const messageId = messageIdIn(answer.text);
    if (reply.ret !== 0 && messageId === null) throw this.http.unconfirmed(answer);
    return { messageId: messageId ?? clientId };
  }

  private refusal(answer: PlatformAnswer, code: number, reply: IlinkAnswer): PlatformSendError {
    const said = saidBy(reply) ?? `errcode ${code}`;
    if (code === SESSION_TIMEOUT) return this.http.refusedCredentials(said);
    if (code === RATE_LIMITED) return new PlatformSendError('rate_limited', `weixin is rate-limiting (${this.http.clean(said)})`);
    return new PlatformSendError('refused', `weixin refused the message (${this.http.clean(said) || `HTTP ${answer.status}`})`);
  }
}

/** iLink's own code of an error answer: `errcode` when set, else `ret`; null for none. */
function errorCodeOf(reply: IlinkAnswer): number | null {
  if (typeof reply.errcode === 'number' && reply.errcode !== 0) return reply.errcode;
  if (typeof reply.ret === 'number' && reply.ret !== 0) return reply.ret;
  return null;
}

function saidBy(reply: IlinkAnswer): string | undefined {
  const code = errorCodeOf(reply);
  const message = typeof reply.errmsg === 'string' && reply.errmsg !== '' ? reply.errmsg : undefined;
  if (code === null) return message;
  return message === undefined ? `errcode ${code}` : `errcode ${code}: ${message}`;
}

/** `message_id` is a uint64: read from the text, as JSON numbers lose digits past 2^53. */
function messageIdIn(text: string): string | null {
  const found = /"message_id"\s*:\s*"?(\d+)"?/.exec(text);
  return found && found[1] !== '0' ? found[1]! : null;
}

/** What iLink expects in `X-WECHAT-UIN`: a random uint32 in decimal, base64-encoded. */
function randomUin(): string {
  return Buffer.from(String(randomBytes(4).readUInt32BE(0))).toString('base64');
}

/**
 * WeChat reads a `<` as the start of an HTML tag and swallows the rest of the line when none
 * follows; a full-width `＜` shows instead. Code blocks are shown verbatim, so they keep theirs.
 * The length does not change, so a part stays within the limit.
 */
function shownAsWritten(text: string): string {
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const [, marker, rest = ''] = /^\s{0,3}(`{3,}|~{3,})(.*)$/.exec(line) ?? [];
      if (marker !== undefined && fence === null) {
        fence = marker;
        return line;
      }
      if (marker !== undefined && fence !== null && marker[0] === fence[0] && marker.length >= fence.length && rest.trim() === '') {
        fence = null;
        return line;
      }
      return fence === null ? line.replace(/<(?![A-Za-z/])/g, '\uFF1C') : line;
    })
    .join('\n');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new WeixinSender(settings);
}
