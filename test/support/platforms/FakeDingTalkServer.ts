import { createHmac } from 'node:crypto';
import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const DINGTALK_CLIENT_ID = 'dingq8zmiexkcbyw3fdw';
export const DINGTALK_CLIENT_SECRET = 'TESTdingtalkClientSecret_0123456789abcdefABCDEF';
export const DINGTALK_WEBHOOK_TOKEN = 'a6ad6c5b5bf35d9ff37f9c7eTESTwebhookToken';
export const DINGTALK_SIGNING_SECRET = 'SEC240d7bb4c0bafc62TESTsigningSecret';
export const OPS_GROUP = 'cid6KeBBLoveMJOGXoYKF5x7EeiodoA==';
export const HOME_GROUP = 'cidHomeGroup0000000000000A==';

const TOKEN_PATH = '/v1.0/oauth2/accessToken';
const GROUP_SEND_PATH = '/v1.0/robot/groupMessages/send';
const WEBHOOK_PATH = '/robot/send';

/** How the fake is reached: an app's open API, or a custom robot's webhook. */
export type DingTalkWay = 'open_api' | 'webhook';

/** One group message the fake stored. */
export interface DingTalkMessage {
  way: DingTalkWay;
  /** The open conversation id, or `webhook` for the robot's own group. */
  group: string;
  text: string;
}

const apiError = (status: number, code: string, message: string): FakeAnswer => ({
  status,
  json: { code, requestid: '76DABAC0-8ED5-7622-B692-B9E083CB09E9', message },
});
const webhookError = (errcode: number, errmsg: string): FakeAnswer => ({ status: 200, accepted: false, json: { errcode, errmsg } });

/**
 * DingTalk as its open platform documents it, both ways a bot posts to a group. The open API
 * (https://open.dingtalk.com): `POST /v1.0/oauth2/accessToken {appKey, appSecret}` answering
 * `{accessToken, expireIn}`, and `POST /v1.0/robot/groupMessages/send` with the
 * `x-acs-dingtalk-access-token` header, `{robotCode, openConversationId, msgKey: "sampleText",
 * msgParam}` answered `{processQueryKey}`, errors as HTTP 4xx `{code, message, requestid}` and 401
 * for a token it did not issue. The custom robot webhook: `POST /robot/send?access_token=…`
 * (`&timestamp=…&sign=…` when the robot signs) with `{msgtype: "text", text: {content}}`, every
 * answer HTTP 200 with `{errcode, errmsg}`.
 */
export class FakeDingTalkServer extends HttpFakePlatform {
  readonly platform = 'dingtalk';
  // Neither way gives a retry hint on a rate limit.
  override readonly rateLimitHint = false;
  /** The groups the app's robot is in. */
  readonly groups = new Set([OPS_GROUP, HOME_GROUP]);
  /** The robots of the app: its own client id, and any other robot code a test adds. */
  readonly robotCodes = new Set([DINGTALK_CLIENT_ID]);
  readonly messages: DingTalkMessage[] = [];
  readonly validTokens = new Set<string>();
  expireSeconds = 7200;
  tokenRequests = 0;
  /** False: tokens are issued but every send with one is answered 401. */
  acceptsTokens = true;
  /** Whether the webhook robot requires a signature. */
  signs = true;
  private tokenFailures: FakeAnswer[] = [];
  private readonly scriptedAnswers: FakeAnswer[] = [];

  constructor(readonly way: DingTalkWay) {
    super();
  }

  get target(): string {
    return this.way === 'open_api' ? `dingtalk:${OPS_GROUP}` : 'dingtalk:webhook';
  }

  get settings(): Record<string, string> {
    if (this.way === 'webhook') {
      return { webhook_url: this.webhookUrl, ...(this.signs ? { secret: DINGTALK_SIGNING_SECRET } : {}), base_url: this.url };
    }
    return { client_id: DINGTALK_CLIENT_ID, client_secret: DINGTALK_CLIENT_SECRET, base_url: this.url, home_channel: HOME_GROUP };
  }

  get webhookUrl(): string {
    return `${this.url}${WEBHOOK_PATH}?access_token=${DINGTALK_WEBHOOK_TOKEN}`;
  }

  static start(way: DingTalkWay): Promise<FakeDingTalkServer> {
    return new FakeDingTalkServer(way).start();
  }

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

  callsTo(path: string): RecordedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  /**
   * The open API's check is the token request: `refused` a 400 to it, `anonymous` a 200 without
   * `accessToken`. A robot webhook has no check.
   */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    if (this.way === 'webhook') return false;
    this.failTokenRequests(
      oddity === 'refused'
        ? apiError(400, 'Forbidden.AccessDenied.IpNotInWhiteList', 'ip not in whitelist')
        : { status: 200, json: { expireIn: 7200 } },
    );
    return true;
  }

  /** Only a well-formed, authorised send reaches the send path. */
  protected textOf(request: RecordedRequest): string | null {
    if (request.method !== 'POST') return null;
    if (request.path === GROUP_SEND_PATH && this.groupRefusal(request) === null) return JSON.parse(request.body.msgParam).content;
    if (request.path === WEBHOOK_PATH && this.webhookRefusal(request) === null) return request.body.text.content;
    return null;
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const scripted = this.scriptedAnswers.shift();
    if (scripted) return { accepted: false, ...scripted };
    if (request.path === WEBHOOK_PATH) {
      this.messages.push({ way: 'webhook', group: 'webhook', text: request.body.text.content });
      return { status: 200, json: { errcode: 0, errmsg: 'ok' } };
    }
    this.messages.push({ way: 'open_api', group: request.body.openConversationId, text: JSON.parse(request.body.msgParam).content });
    return { status: 200, json: { processQueryKey: `pqk${messageId.padStart(6, '0')}/OgXq1ldG0FzEh7kYLH0ZnA==` } };
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>): FakeAnswer {
    if (this.way === 'webhook') {
      switch (failure) {
        case 'rate_limited':
          return webhookError(130101, 'send too fast, exceed 20 times per minute');
        case 'unavailable':
          return { status: 502, text: '<html><body><h1>502 Bad Gateway</h1></body></html>' };
        case 'refused':
          return webhookError(310000, '关键词不匹配 keywords not in content');
        case 'unauthorized':
          return webhookError(300001, 'token is not exist');
      }
    }
    switch (failure) {
      case 'rate_limited':
        return apiError(429, 'Throttling.Api', 'The request has exceeded the allowed limit.');
      case 'unavailable':
        return { status: 503, text: '<html><body>503 Service Temporarily Unavailable</body></html>' };
      case 'refused':
        return apiError(400, 'invalidParameter.robotCode.notExsit', '机器人不存在');
      case 'unauthorized':
        // The app's secret was reset: its tokens stop working and the old secret gets no new one.
        this.revokeTokens();
        this.failTokenRequests(apiError(400, 'invalidClientIdOrSecret', '无效的clientId或者clientSecret'));
        return apiError(401, 'InvalidAuthentication', '不合法的access_token');
    }
  }

  protected override other(request: RecordedRequest): FakeAnswer {
    if (request.method === 'POST' && request.path === TOKEN_PATH) return this.issueToken(request);
    if (request.method === 'POST' && request.path === GROUP_SEND_PATH) {
      this.attempts += 1;
      return this.groupRefusal(request)!;
    }
    if (request.method === 'POST' && request.path === WEBHOOK_PATH) {
      this.attempts += 1;
      return this.webhookRefusal(request)!;
    }
    return apiError(404, 'InvalidAction.NotFound', 'Specified api is not found, please check your url and method.');
  }

  private issueToken(request: RecordedRequest): FakeAnswer {
    this.tokenRequests += 1;
    const failure = this.tokenFailures.shift();
    if (failure) return failure;
    if (request.body?.appKey !== DINGTALK_CLIENT_ID || request.body?.appSecret !== DINGTALK_CLIENT_SECRET) {
      return apiError(400, 'invalidClientIdOrSecret', '无效的clientId或者clientSecret');
    }
    const token = `d1b2c3TESTappToken${String(this.tokenRequests).padStart(4, '0')}`;
    if (this.acceptsTokens) this.validTokens.add(token);
    return { status: 200, json: { accessToken: token, expireIn: this.expireSeconds } };
  }

  private groupRefusal(request: RecordedRequest): FakeAnswer | null {
    const token = request.headers['x-acs-dingtalk-access-token'];
    if (typeof token !== 'string' || !this.validTokens.has(token)) return apiError(401, 'InvalidAuthentication', '不合法的access_token');
    const body = request.body;
    if (typeof body !== 'object' || body === null) return apiError(400, 'invalidParameter.param.invalid', '参数不合法');
    if (!this.robotCodes.has(body.robotCode)) return apiError(400, 'invalidParameter.robotCode.notExsit', '机器人不存在');
    if (body.msgKey !== 'sampleText' || typeof body.msgParam !== 'string')
      return apiError(400, 'invalidParameter.msgKey.invalid', 'msgKey不合法');
    let content: unknown;
    try {
      content = JSON.parse(body.msgParam).content;
    } catch {
      content = undefined;
    }
    if (typeof content !== 'string') return apiError(400, 'invalidParameter.msgParam.invalid', 'msgParam不合法');
    if (typeof body.openConversationId !== 'string' || !this.groups.has(body.openConversationId)) {
      return apiError(400, 'invalid.openConversationId', 'openConversationId不合法');
    }
    return null;
  }

  private webhookRefusal(request: RecordedRequest): FakeAnswer | null {
    if (request.query.get('access_token') !== DINGTALK_WEBHOOK_TOKEN) return webhookError(300001, 'token is not exist');
    if (this.signs) {
      const timestamp = request.query.get('timestamp') ?? '';
      const expected = createHmac('sha256', DINGTALK_SIGNING_SECRET).update(`${timestamp}\n${DINGTALK_SIGNING_SECRET}`).digest('base64');
      if (!/^\d{13}$/.test(timestamp) || request.query.get('sign') !== expected) {
        return webhookError(310000, 'sign not match, more: [https://ding-doc.dingtalk.com/doc#/serverapi2/qf2nxq]');
      }
    }
    const body = request.body;
    if (body?.msgtype !== 'text' || typeof body?.text?.content !== 'string') return webhookError(40035, '缺少参数 json');
    return null;
  }
}
