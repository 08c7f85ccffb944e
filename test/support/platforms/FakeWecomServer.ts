import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const WECOM_CORP_ID = 'ww0a1b2c3d4e5f6a7b';
export const WECOM_SECRET = 'TESTwecomSecret-3kQ9vX2mL7pR8sT1uV4wY6zA0bC';
export const WECOM_AGENT_ID = '1000002';

/** WeCom cuts a text message's content after this many bytes and still answers errcode 0. */
const TEXT_BYTES = 2048;

const wecomError = (errcode: number, errmsg: string, extra: Record<string, unknown> = {}): FakeAnswer => ({
  status: 200,
  json: {
    errcode,
    errmsg: `${errmsg}, hint: [1712345678_fake], more info at https://open.work.weixin.qq.com/devtool/query?e=${errcode}`,
    ...extra,
  },
  accepted: false,
});

/**
 * WeCom's server API for one self-built app, as https://developer.work.weixin.qq.com describes
 * it: `GET /cgi-bin/gettoken?corpid&corpsecret` issuing a token with `expires_in`,
 * `POST /cgi-bin/appchat/send` and `POST /cgi-bin/message/send` taking `?access_token=`, every
 * answer HTTP 200 with an `errcode` (0 for success, 40014 for an unknown token, 42001 for an
 * expired one). Like WeCom, it keeps only the first 2048 bytes of a text and says nothing.
 */
export class FakeWecomServer extends HttpFakePlatform {
  readonly platform = 'wecom';
  readonly target = 'wecom:opsalerts2024';
  override readonly rateLimitHint = false;
  /** Group chats the app created. */
  readonly chats = new Set(['opsalerts2024', 'homechat01']);
  /** Members in the app's visible range. */
  readonly users = new Set(['ZhangSan', 'lisi']);
  /** The lifetime given with each new token, in seconds. */
  tokenLifetime = 7200;
  /** Requests to gettoken, answered or not. */
  tokenRequests = 0;
  /** Whether the secret has been reset in the admin console, so gettoken refuses it. */
  secretRevoked = false;
  /** The next gettoken requests fail with these answers instead. */
  readonly tokenFailures: FakeAnswer[] = [];
  private readonly liveTokens = new Set<string>();
  private readonly expiredTokens = new Set<string>();
  private readonly scriptedAnswers: FakeAnswer[] = [];
  private issued = 0;

  get settings(): Record<string, string> {
    return { corp_id: WECOM_CORP_ID, secret: WECOM_SECRET, agent_id: WECOM_AGENT_ID, base_url: this.url, home_channel: 'homechat01' };
  }

  static start(): Promise<FakeWecomServer> {
    return new FakeWecomServer().start();
  }

  /** Every token issued so far now answers 42001, as when its two hours are over. */
  expireTokens(): void {
    for (const token of this.liveTokens) this.expiredTokens.add(token);
    this.liveTokens.clear();
  }

  /** Answers the next well-formed, authorised send with `answer` instead of confirming it. */
  answerNextSendWith(answer: FakeAnswer): void {
    this.scriptedAnswers.push(answer);
  }

  /** The access tokens the sends carried, in order. */
  get tokensUsed(): string[] {
    return this.requests
      .filter((request) => request.path !== '/cgi-bin/gettoken')
      .map((request) => request.query.get('access_token') ?? '');
  }

  /** `refused`: a gateway's 400 to `agent/get`; `anonymous`: errcode 0 without the app's `name`. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.method === 'GET' && request.path === '/cgi-bin/agent/get',
      oddity === 'refused'
        ? { status: 400, text: '<html><body>400 Bad Request</body></html>' }
        : { status: 200, json: { errcode: 0, errmsg: 'ok', agentid: Number(WECOM_AGENT_ID) } },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    if (request.method !== 'POST' || (request.path !== '/cgi-bin/appchat/send' && request.path !== '/cgi-bin/message/send')) return null;
    const content = request.body?.text?.content;
    return typeof content === 'string' ? truncated(content) : '';
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const refusal = this.tokenRefusal(request) ?? this.bodyRefusal(request);
    if (refusal) return refusal;
    const scripted = this.scriptedAnswers.shift();
    if (scripted) return { accepted: false, ...scripted };
    if (request.path === '/cgi-bin/appchat/send') return { status: 200, json: { errcode: 0, errmsg: 'ok' } };
    return {
      status: 200,
      json: {
        errcode: 0,
        errmsg: 'ok',
        invaliduser: '',
        invalidparty: '',
        invalidtag: '',
        unlicenseduser: '',
        msgid: `msgid-${messageId}`,
        response_code: '',
      },
    };
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return wecomError(45009, 'api freq out of limit');
      case 'unavailable':
        return wecomError(-1, 'system busy');
      case 'refused':
        return wecomError(86001, 'chatid invalid');
      case 'unauthorized':
        // The secret was reset in the admin console: the token in use stops working, and a new one is refused.
        this.secretRevoked = true;
        this.liveTokens.clear();
        return wecomError(40014, 'invalid access_token');
    }
  }

  /** gettoken, and `GET /cgi-bin/agent/get?agentid=`: the app's name. */
  protected override other(request: RecordedRequest): FakeAnswer {
    if (request.method === 'GET' && request.path === '/cgi-bin/agent/get') {
      const refusal = this.tokenRefusal(request);
      if (refusal) return refusal;
      if (request.query.get('agentid') !== WECOM_AGENT_ID) return wecomError(40056, 'invalid agentid');
      return {
        status: 200,
        json: {
          errcode: 0,
          errmsg: 'ok',
          agentid: Number(WECOM_AGENT_ID),
          name: 'Delivery Bot',
          square_logo_url: 'https://p.qlogo.cn/x',
          description: '',
          close: 0,
        },
      };
    }
    if (request.path !== '/cgi-bin/gettoken') return { status: 404, text: 'not found' };
    this.tokenRequests += 1;
    const failure = this.tokenFailures.shift();
    if (failure) return failure;
    if (request.method !== 'GET') return wecomError(43001, 'require GET method');
    if (request.query.get('corpid') !== WECOM_CORP_ID) return wecomError(40013, 'invalid corpid');
    if (request.query.get('corpsecret') !== WECOM_SECRET || this.secretRevoked) return wecomError(40001, 'invalid credential');
    this.issued += 1;
    const token = `wecom-access-token-${this.issued}-${'x'.repeat(24)}`;
    this.liveTokens.add(token);
    return { status: 200, json: { errcode: 0, errmsg: 'ok', access_token: token, expires_in: this.tokenLifetime } };
  }

  private tokenRefusal(request: RecordedRequest): FakeAnswer | null {
    const token = request.query.get('access_token');
    if (token === null || token === '') return wecomError(41001, 'access_token missing');
    if (this.expiredTokens.has(token)) return wecomError(42001, 'access_token expired');
    return this.liveTokens.has(token) ? null : wecomError(40014, 'invalid access_token');
  }

  private bodyRefusal(request: RecordedRequest): FakeAnswer | null {
    const body = request.body;
    if (!String(request.headers['content-type'] ?? '').startsWith('application/json') || typeof body !== 'object' || body === null) {
      return wecomError(47001, 'data format error');
    }
    if (body.msgtype !== 'text') return wecomError(40008, 'invalid message type');
    if (typeof body.text?.content !== 'string' || body.text.content === '') return wecomError(41011, 'missing content');
    if (request.path === '/cgi-bin/appchat/send') return this.chats.has(body.chatid) ? null : wecomError(86001, 'chatid invalid');
    if (body.agentid !== Number(WECOM_AGENT_ID)) return wecomError(40056, 'invalid agentid');
    if (body.touser === '@all' || this.users.has(body.touser)) return null;
    return wecomError(81013, 'user & party & tag all invalid', { invaliduser: String(body.touser ?? '').toLowerCase() });
  }
}

/** What WeCom shows of a text: its first 2048 bytes, a character cut in two dropped. */
function truncated(content: string): string {
  const bytes = Buffer.from(content, 'utf8');
  if (bytes.length <= TEXT_BYTES) return content;
  return bytes
    .subarray(0, TEXT_BYTES)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}
