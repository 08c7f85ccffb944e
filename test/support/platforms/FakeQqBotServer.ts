import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const QQBOT_APP_ID = '102056411';
export const QQBOT_CLIENT_SECRET = 'TESTqqClientSecret9fK2mP7xQ4vR8sW1';
export const QQ_GROUP = 'C9F778FE6ADF9D1D1DBE395BF744A33A';
export const QQ_USER = '8A4C98B7CF527E73C24ADA017EFAA67F';
export const QQ_CHANNEL = '1234567890123';

const TOKEN_PATH = '/app/getAppAccessToken';
const SEND = /^\/(?:v2\/(groups|users)\/([^/]+)|(channels)\/([^/]+))\/messages$/;

const qqError = (status: number, code: number, message: string): FakeAnswer => ({
  status,
  json: { message, code, err_code: code, trace_id: 'fake-trace-0001' },
  accepted: false,
});

/**
 * The QQ Bot open platform as https://bot.q.qq.com/wiki/develop/api-v2/ describes it, token host
 * and OpenAPI on one server: `POST /app/getAppAccessToken {appId, clientSecret}` answering
 * `{access_token, expires_in: "7200"}` (a string, as in QQ's example) or HTTP 200 with
 * `{code: 100016}` for a wrong secret; sends to `/v2/groups/{group_openid}/messages`,
 * `/v2/users/{openid}/messages` (`{content, msg_type: 0}`, answered `{id, timestamp}`) and
 * `/channels/{channel_id}/messages` (answered with the Message object), each needing
 * `Authorization: QQBot <token>`; an unknown or expired token is HTTP 401 with code 11244.
 */
export class FakeQqBotServer extends HttpFakePlatform {
  readonly platform = 'qqbot';
  readonly target = `qqbot:${QQ_GROUP}`;
  override readonly rateLimitHint = false;
  readonly groups = new Set([QQ_GROUP]);
  readonly users = new Set([QQ_USER]);
  readonly channels = new Set([QQ_CHANNEL]);
  /** The lifetime given with each new token, in seconds, sent as text like QQ's own example. */
  tokenLifetime: string | number = '7200';
  tokenRequests = 0;
  /** Whether the client secret was reset on q.qq.com, so the token endpoint refuses it. */
  secretRevoked = false;
  /** The next token requests fail with these answers instead. */
  readonly tokenFailures: FakeAnswer[] = [];
  private readonly liveTokens = new Set<string>();
  private readonly scriptedAnswers: FakeAnswer[] = [];
  private issued = 0;

  /** A wrong secret; `token_url` is an address, not a credential. */
  readonly wrongCredentials = { client_secret: 'wrong-client-secret-0000' };

  get settings(): Record<string, string> {
    return {
      app_id: QQBOT_APP_ID,
      client_secret: QQBOT_CLIENT_SECRET,
      base_url: this.url,
      token_url: `${this.url}${TOKEN_PATH}`,
      home_channel: `channel:${QQ_CHANNEL}`,
    };
  }

  static start(): Promise<FakeQqBotServer> {
    return new FakeQqBotServer().start();
  }

  /** Every token issued so far stops working, as after its lifetime. */
  expireTokens(): void {
    this.liveTokens.clear();
  }

  /** Answers the next well-formed, authorised send with `answer` instead of confirming it. */
  answerNextSendWith(answer: FakeAnswer): void {
    this.scriptedAnswers.push(answer);
  }

  /** The Authorization headers the sends carried, in order. */
  get authorizationsUsed(): string[] {
    return this.requests.filter((request) => request.path !== TOKEN_PATH).map((request) => String(request.headers.authorization ?? ''));
  }

  /** `refused`: a 400 to `GET /users/@me`; `anonymous`: a user with neither `username` nor `id`. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.method === 'GET' && request.path === '/users/@me',
      oddity === 'refused'
        ? qqError(400, 12002, 'request invalid')
        : { status: 200, json: { avatar: 'https://thirdqq.qlogo.cn/g?b=oidb&k=x' } },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    if (request.method !== 'POST' || !SEND.test(request.path)) return null;
    return typeof request.body?.content === 'string' ? request.body.content : '';
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const refusal = this.refusalOf(request);
    if (refusal) return refusal;
    const scripted = this.scriptedAnswers.shift();
    if (scripted) return { accepted: false, ...scripted };
    const id = `ROBOT1.0_fakeMessage${messageId}`;
    const [, , , channels, channelId] = SEND.exec(request.path)!;
    if (channels) {
      return {
        status: 200,
        json: {
          id,
          channel_id: channelId,
          guild_id: '9876543210',
          content: request.body.content,
          timestamp: '2024-04-05T14:45:45+08:00',
          author: { id: '1', username: 'bot', bot: true },
        },
      };
    }
    return { status: 200, json: { id, timestamp: 1712299545 } };
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return qqError(429, 20028, 'channel hit write rate limit');
      case 'unavailable':
        return qqError(500, 1100300, 'internal error');
      case 'refused':
        return qqError(400, 304003, 'url not allowed');
      case 'unauthorized':
        // The secret was reset: the token in use stops working, and a new one is refused.
        this.secretRevoked = true;
        this.liveTokens.clear();
        return qqError(401, 11244, 'token not exist or expire');
    }
  }

  /** The token endpoint, and `GET /users/@me`: the bot's own user. */
  protected override other(request: RecordedRequest): FakeAnswer {
    if (request.method === 'GET' && request.path === '/users/@me') {
      const authorization = String(request.headers.authorization ?? '');
      if (!authorization.startsWith('QQBot ') || !this.liveTokens.has(authorization.slice('QQBot '.length)))
        return qqError(401, 11244, 'token not exist or expire');
      return {
        status: 200,
        json: {
          id: '14482948383453455223',
          username: 'DeliveryBot-测试中',
          avatar: 'https://thirdqq.qlogo.cn/g?b=oidb&k=x',
          union_openid: '',
          union_user_account: '',
        },
      };
    }
    if (request.path !== TOKEN_PATH) return qqError(404, 404, 'not found');
    this.tokenRequests += 1;
    const failure = this.tokenFailures.shift();
    if (failure) return failure;
    const body = request.body as { appId?: unknown; clientSecret?: unknown } | undefined;
    if (request.method !== 'POST' || typeof body !== 'object' || body === null)
      return { status: 200, json: { code: 100016, message: 'invalid appid or secret' } };
    if (body.appId !== QQBOT_APP_ID) return { status: 200, json: { code: 100007, message: 'appid invalid' } };
    if (body.clientSecret !== QQBOT_CLIENT_SECRET || this.secretRevoked)
      return { status: 200, json: { code: 100016, message: 'invalid appid or secret' } };
    this.issued += 1;
    const token = `qq-access-token-${this.issued}-${'y'.repeat(24)}`;
    this.liveTokens.add(token);
    return { status: 200, json: { access_token: token, expires_in: this.tokenLifetime } };
  }

  private refusalOf(request: RecordedRequest): FakeAnswer | null {
    const authorization = String(request.headers.authorization ?? '');
    if (!authorization.startsWith('QQBot ') || !this.liveTokens.has(authorization.slice('QQBot '.length))) {
      return qqError(401, 11244, 'token not exist or expire');
    }
    const body = request.body;
    if (!String(request.headers['content-type'] ?? '').startsWith('application/json') || typeof body !== 'object' || body === null) {
      return qqError(400, 12002, 'request invalid');
    }
    if (typeof body.content !== 'string' || body.content === '') return qqError(400, 50006, 'cannot send empty message');
    const [, kind, openid, channels, channelId] = SEND.exec(request.path)!;
    if (channels) return this.channels.has(channelId!) ? null : qqError(400, 10003, 'unknown channel');
    if (body.msg_type !== 0) return qqError(400, 50035, 'invalid form body: msg_type');
    const known = kind === 'groups' ? this.groups : this.users;
    return known.has(openid!) ? null : qqError(400, 12002, `request invalid: unknown ${kind === 'groups' ? 'group_openid' : 'openid'}`);
  }
}
