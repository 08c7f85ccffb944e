import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest } from './FakePlatformServer.js';

export const WEIXIN_TOKEN = 'b0f5860fdecb@im.bot:0600TESTweixinBotToken';
export const WEIXIN_USER = 'o9cq80zNgY8wRuS5RyIdCU9VNAo0@im.wechat';
export const WEIXIN_HOME = 'o9cq80HomeUserAbCdEfGh12345@im.wechat';

const SEND = '/ilink/bot/sendmessage';
/** iLink's answer to a token it does not know or a session that ended, on every endpoint. */
const SESSION_TIMEOUT: FakeAnswer = { status: 200, json: { errcode: -14, errmsg: 'session timeout' } };

/**
 * Tencent's iLink bot API as https://github.com/Tencent/openclaw-weixin/blob/main/docs/protocol.md
 * describes `sendmessage`: `POST /ilink/bot/sendmessage` with `AuthorizationType: ilink_bot_token`
 * and `Authorization: Bearer <bot token>`, a `msg` of type 2 (bot) in state 2 (finished) with one
 * text item, answered `{"ret":0}`. Errors come as HTTP 200 too: `errcode` -14 for a dead session or
 * an unknown token, -2 for the frequency limit, another non-zero `ret` with `errmsg` for a message
 * it will not take (iLink documents no list of codes; -1 stands for them here).
 */
export class FakeWeixinServer extends HttpFakePlatform {
  readonly platform = 'weixin';
  readonly target = `weixin:${WEIXIN_USER}`;
  /** iLink's frequency limit gives no wait to honour. */
  override readonly rateLimitHint = false;
  /** The users who have chatted with the bot: the only ones it can reach. */
  readonly users = new Set([WEIXIN_USER, WEIXIN_HOME]);
  /** Add `message_id` to confirmations, as some iLink versions do. */
  withMessageIds = false;
  private readonly scriptedAnswers: FakeAnswer[] = [];

  get settings(): Record<string, string> {
    return { token: WEIXIN_TOKEN, base_url: this.url, home_channel: WEIXIN_HOME };
  }

  static start(): Promise<FakeWeixinServer> {
    return new FakeWeixinServer().start();
  }

  /** Answers the next well-formed send with `answer` instead of confirming it. */
  answerNextSendWith(answer: FakeAnswer): void {
    this.scriptedAnswers.push(answer);
  }

  protected textOf(request: RecordedRequest): string | null {
    if (request.method !== 'POST' || request.path !== SEND) return null;
    return String(request.body?.msg?.item_list?.[0]?.text_item?.text ?? '');
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const refusal = this.refusalOf(request);
    if (refusal) return { ...refusal, accepted: false };
    const scripted = this.scriptedAnswers.shift();
    if (scripted) return { accepted: false, ...scripted };
    // A uint64 past 2^53, as iLink's message ids are.
    return { status: 200, json: this.withMessageIds ? { ret: 0, message_id: `${7340000000000000000n + BigInt(messageId)}` } : { ret: 0 } };
  }

  private refusalOf(request: RecordedRequest): FakeAnswer | null {
    if (request.headers.authorization !== `Bearer ${WEIXIN_TOKEN}` || request.headers.authorizationtype !== 'ilink_bot_token')
      return SESSION_TIMEOUT;
    const msg = request.body?.msg;
    const item = msg?.item_list?.[0];
    const wellFormed =
      String(request.headers['content-type'] ?? '').startsWith('application/json') &&
      msg?.message_type === 2 &&
      msg?.message_state === 2 &&
      typeof msg?.client_id === 'string' &&
      msg.item_list.length === 1 &&
      item?.type === 1 &&
      typeof item?.text_item?.text === 'string' &&
      item.text_item.text !== '';
    if (!wellFormed) return ilinkError(-1, 'invalid param');
    if (!this.users.has(msg.to_user_id)) return ilinkError(-1, 'user not found');
    return null;
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return ilinkError(-2, 'freq limit');
      case 'unavailable':
        return { status: 502, text: '<html><body><h1>502 Bad Gateway</h1></body></html>' };
      case 'refused':
        return ilinkError(-1, 'user not found');
      case 'unauthorized':
        return SESSION_TIMEOUT;
    }
  }
}

function ilinkError(ret: number, errmsg: string): FakeAnswer {
  return { status: 200, json: { ret, errmsg } };
}
