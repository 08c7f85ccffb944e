import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const FEISHU_APP_ID = 'cli_a1b2c3d4e5f6a7b8';
export const FEISHU_APP_SECRET = 'TESTfeishuAppSecret0123456789ab';

const TOKEN_PATH = '/open-apis/auth/v3/tenant_access_token/internal';
const SEND_PATH = '/open-apis/im/v1/messages';
const REPLY_PATH = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reply$/;

/** One message the fake stored, with how it was addressed. */
export interface FeishuMessage {
  messageId: string;
  uuid: string | undefined;
  /** The chat, person or, for a reply, the message replied to. */
  to: string;
  text: string;
  replyInThread: boolean;
}

const feishuError = (status: number, code: number, msg: string, headers?: Record<string, string>): FakeAnswer => ({
  status,
  json: { code, msg, data: {} },
  ...(headers ? { headers } : {}),
});

/**
 * Feishu's Open Platform as https://open.feishu.cn/document describes it, for one custom app:
 * `POST /open-apis/auth/v3/tenant_access_token/internal` issuing `t-…` tokens with `expire`,
 * `POST /open-apis/im/v1/messages?receive_id_type=…` and `POST /open-apis/im/v1/messages/{om_…}/reply`
 * with `Authorization: Bearer t-…`, answers `{code, msg, data}` (HTTP 400 for most errors),
 * 99991663 for a token it did not issue or has revoked, 99991400 with `x-ogw-ratelimit-reset` on
 * a 429, and a send's `uuid` run at most once.
 */
export class FakeFeishuServer extends HttpFakePlatform {
  readonly platform = 'feishu';
  readonly target = 'feishu:oc_5ad11d72b830411d72b836c20';
  /** Group chats the bot is in, and people within its availability. */
  readonly chats = new Set(['oc_5ad11d72b830411d72b836c20', 'oc_home0000000000000000000']);
  readonly people = new Set(['ou_7d8a6e6df7621556ce0d21922b676706', 'on_94a1ee5551019f18cd73d9f111898cf2']);
  /** Messages people posted that the bot can reply to, besides its own. */
  readonly otherMessages = new Set(['om_dc13264520392913993dd051dba21dcf']);
  readonly messages: FeishuMessage[] = [];
  /** The tokens the fake issued and still accepts. */
  readonly validTokens = new Set<string>();
  /** The `expire` (seconds) the next token is issued with. */
  expireSeconds = 7200;
  tokenRequests = 0;
  /** False: tokens are issued but every send with one is refused with 99991663. */
  acceptsTokens = true;
  private tokenFailures: FakeAnswer[] = [];
  private readonly scriptedAnswers: FakeAnswer[] = [];
  private answersToLose = 0;

  get settings(): Record<string, string> {
    return { app_id: FEISHU_APP_ID, app_secret: FEISHU_APP_SECRET, base_url: this.url, home_channel: 'oc_home0000000000000000000' };
  }

  static start(): Promise<FakeFeishuServer> {
    return new FakeFeishuServer().start();
  }

  /** Every token issued so far stops being accepted, as when it expires or the app's secret is reset. */
  revokeTokens(): void {
    this.validTokens.clear();
  }

  /** The next token requests are answered with these instead of a token. */
  failTokenRequests(...answers: FakeAnswer[]): void {
    this.tokenFailures.push(...answers);
  }

  /** Answers the next well-formed, authorised send with `answer` instead of running it. */
  answerNextSendWith(answer: FakeAnswer): void {
    this.scriptedAnswers.push(answer);
  }

  /** The requests made to one path, e.g. the token endpoint. */
  callsTo(path: string): RecordedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  /** The next `count` sends are stored, but the gateway answers 502 instead of the message id. */
  loseAnswers(count = 1): void {
    this.answersToLose += count;
  }

  /** `refused`: the app lacks the scope to read its bot; `anonymous`: `code` 0 with a bot that has no name or open id. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.method === 'GET' && request.path === '/open-apis/bot/v3/info',
      oddity === 'refused'
        ? feishuError(400, 99991672, 'Access denied. One of the following scopes is required: [bot:info]')
        : { status: 200, json: { code: 0, msg: 'ok', bot: { activate_status: 2 } } },
    );
    return true;
  }

  /** Only a well-formed, authorised send of a new `uuid` reaches the send path. */
  protected textOf(request: RecordedRequest): string | null {
    if (!isSend(request) || this.refusal(request) !== null || this.earlierSend(request) !== undefined) return null;
    return String(JSON.parse(request.body.content).text);
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const scripted = this.scriptedAnswers.shift();
    if (scripted) return { accepted: false, ...scripted };
    const id = `om_${messageId.padStart(24, '0')}`;
    const reply = REPLY_PATH.exec(request.path);
    this.messages.push({
      messageId: id,
      uuid: request.body.uuid,
      to: reply ? decodeURIComponent(reply[1]!) : request.body.receive_id,
      text: JSON.parse(request.body.content).text,
      replyInThread: request.body.reply_in_thread === true,
    });
    if (this.answersToLose > 0) {
      this.answersToLose -= 1;
      return { status: 502, text: '<html><body><h1>502 Bad Gateway</h1></body></html>', accepted: true };
    }
    return this.sent(id, request);
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>, retryAfter: number): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return feishuError(429, 99991400, 'request trigger frequency limit', {
          'x-ogw-ratelimit-limit': '50',
          'x-ogw-ratelimit-reset': String(retryAfter),
        });
      case 'unavailable':
        return { status: 503, text: '<html><body>503 Service Temporarily Unavailable</body></html>' };
      case 'refused':
        return feishuError(400, 230002, 'Bot/User can NOT be out of the chat.');
      case 'unauthorized':
        // The app's secret was reset: its tokens stop working and the old secret gets no new one.
        this.revokeTokens();
        this.failTokenRequests(feishuError(400, 10014, 'app secret invalid'));
        return feishuError(400, 99991663, 'Invalid access token for authorization. Please make a request with token attached.');
    }
  }

  protected override other(request: RecordedRequest): FakeAnswer {
    if (request.method === 'POST' && request.path === TOKEN_PATH) return this.issueToken(request);
    if (request.method === 'GET' && request.path === '/open-apis/bot/v3/info') {
      const header = request.headers.authorization ?? '';
      if (!header.startsWith('Bearer ') || !this.validTokens.has(header.slice('Bearer '.length))) {
        return feishuError(400, 99991663, 'Invalid access token for authorization. Please make a request with token attached.');
      }
      // The bot comes beside code and msg, not under data.
      return {
        status: 200,
        json: {
          code: 0,
          msg: 'ok',
          bot: {
            activate_status: 2,
            app_name: 'Delivery Bot',
            avatar_url: 'https://s1-imfile.feishucdn.com/x',
            ip_white_list: [],
            open_id: 'ou_bot00000000000000000000000',
          },
        },
      };
    }
    if (!isSend(request)) return feishuError(404, 404, 'page not found');
    this.attempts += 1;
    const earlier = this.earlierSend(request);
    return this.refusal(request) ?? this.sent(earlier!.messageId, request);
  }

  private issueToken(request: RecordedRequest): FakeAnswer {
    this.tokenRequests += 1;
    const failure = this.tokenFailures.shift();
    if (failure) return failure;
    if (request.body?.app_id !== FEISHU_APP_ID) return feishuError(400, 10003, 'invalid param');
    if (request.body?.app_secret !== FEISHU_APP_SECRET) return feishuError(400, 10014, 'app secret invalid');
    const token = `t-g1044${String(this.tokenRequests).padStart(4, '0')}FAKEtenantToken`;
    if (this.acceptsTokens) this.validTokens.add(token);
    return { status: 200, json: { code: 0, msg: 'ok', tenant_access_token: token, expire: this.expireSeconds } };
  }

  /** Why Feishu would not run this send, or null when it would. */
  private refusal(request: RecordedRequest): FakeAnswer | null {
    const header = request.headers.authorization;
    if (header === undefined)
      return feishuError(400, 99991661, 'Missing access token for authorization. Please make a request with token attached.');
    if (!header.startsWith('Bearer ') || !this.validTokens.has(header.slice('Bearer '.length))) {
      return feishuError(400, 99991663, 'Invalid access token for authorization. Please make a request with token attached.');
    }
    const body = request.body;
    if (!String(request.headers['content-type']).startsWith('application/json') || typeof body !== 'object' || body === null) {
      return feishuError(400, 9499, 'Bad Request');
    }
    if (body.msg_type !== 'text' || typeof body.content !== 'string' || typeof parseContent(body.content)?.text !== 'string') {
      return feishuError(400, 230001, 'Your request contains an invalid request parameter.');
    }
    if (body.uuid !== undefined && (typeof body.uuid !== 'string' || body.uuid.length > 50))
      return feishuError(400, 230001, 'invalid uuid');
    const reply = REPLY_PATH.exec(request.path);
    if (reply) {
      const parent = decodeURIComponent(reply[1]!);
      return this.messages.some((message) => message.messageId === parent) || this.otherMessages.has(parent)
        ? null
        : feishuError(400, 230011, 'The message was withdrawn or does not exist.');
    }
    const type = request.query.get('receive_id_type');
    const to = body.receive_id;
    if (type === 'chat_id') return this.chats.has(to) ? null : feishuError(400, 230002, 'Bot/User can NOT be out of the chat.');
    if (type === 'open_id' || type === 'union_id') {
      return this.people.has(to) && to.startsWith(type === 'open_id' ? 'ou_' : 'on_')
        ? null
        : feishuError(400, 230013, 'Bot has NO availability to this user.');
    }
    return feishuError(400, 99992402, 'field validation failed');
  }

  private earlierSend(request: RecordedRequest): FeishuMessage | undefined {
    const uuid = request.body?.uuid;
    return typeof uuid === 'string' ? this.messages.find((message) => message.uuid === uuid) : undefined;
  }

  private sent(messageId: string, request: RecordedRequest): FakeAnswer {
    const reply = REPLY_PATH.exec(request.path);
    const chatId = reply ? 'oc_5ad11d72b830411d72b836c20' : request.body.receive_id;
    return {
      status: 200,
      json: {
        code: 0,
        msg: 'success',
        data: { message_id: messageId, msg_type: 'text', chat_id: chatId, body: { content: request.body.content } },
      },
    };
  }
}

function isSend(request: RecordedRequest): boolean {
  return request.method === 'POST' && (request.path === SEND_PATH || REPLY_PATH.test(request.path));
}

function parseContent(content: string): { text?: unknown } | null {
  try {
    return JSON.parse(content);
  } catch {
    return null;
  }
}
