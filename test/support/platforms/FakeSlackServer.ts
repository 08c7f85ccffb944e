import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const SLACK_TOKEN = 'xoxb-1111-2222-TESTslacktoken';

export interface FakeSlackChannel {
  id: string;
  name: string;
  is_private?: boolean;
  is_archived?: boolean;
}

/**
 * Slack's Web API as https://api.slack.com/web describes it: `POST /chat.postMessage`,
 * `POST /conversations.open`, `GET /conversations.list`, all with `Authorization: Bearer xoxb-…`,
 * errors as HTTP 200 with `{ok: false, error}` and a 429 with `Retry-After`.
 */
export class FakeSlackServer extends HttpFakePlatform {
  readonly platform = 'slack';
  readonly target = 'slack:C0ALERTS01';
  /** The conversations the bot is in; listing pages through them `pageSize` at a time. */
  channels: FakeSlackChannel[] = [
    { id: 'C0HOME0001', name: 'general' },
    { id: 'C0ALERTS01', name: 'alerts' },
  ];
  pageSize = 2;
  /** Users a direct-message channel can be opened with, and the channel Slack gives each. */
  readonly users = new Map([
    ['U0ALICE001', 'D0ALICE001'],
    ['W0GRIDBOB1', 'D0GRIDBOB1'],
  ]);
  private readonly openedDirectChannels = new Set<string>();
  private readonly scriptedAnswers: FakeAnswer[] = [];
  /** While true, `auth.test` answers 503 as a Slack that is down would. */
  authTestUnavailable = false;

  get settings(): Record<string, string> {
    return { bot_token: SLACK_TOKEN, base_url: this.url, home_channel: 'C0HOME0001' };
  }

  static start(): Promise<FakeSlackServer> {
    return new FakeSlackServer().start();
  }

  /** Answers the next well-formed `chat.postMessage` with `answer` instead of confirming it. */
  answerNextSendWith(answer: FakeAnswer): void {
    this.scriptedAnswers.push(answer);
  }

  /** The requests made to one Web API method, e.g. `conversations.open`. */
  callsTo(method: string): RecordedRequest[] {
    return this.requests.filter((request) => request.path === `/${method}`);
  }

  /** `refused`: a 404 for `auth.test`, as at a wrong base URL; `anonymous`: a proxy's page with 200 and no `ok`. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.path === '/auth.test',
      oddity === 'refused'
        ? { status: 404, json: { ok: false, error: 'unknown_method' } }
        : { status: 200, text: '<html><body>Welcome</body></html>' },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    return request.method === 'POST' && request.path === '/chat.postMessage' ? String(request.body?.text ?? '') : null;
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const refusal = this.refusalOf(request);
    if (refusal) return { ...refusal, accepted: false };
    const { channel, text, thread_ts: threadTs } = request.body as { channel: string; text: string; thread_ts?: unknown };
    const ts = `${1712345678 + Number(messageId)}.000100`;
    const message = { type: 'message', text, ts, ...(typeof threadTs === 'string' ? { thread_ts: threadTs } : {}) };
    return { status: 200, json: { ok: true, channel, ts, message } };
  }

  private refusalOf(request: RecordedRequest): FakeAnswer | null {
    const refusal = authRefusal(request) ?? jsonRefusal(request);
    if (refusal) return refusal;
    const { channel, text } = request.body as { channel?: unknown; text?: unknown };
    if (typeof channel !== 'string' || !this.canPostTo(channel)) return slackError('channel_not_found');
    if (this.channels.some((known) => known.id === channel && known.is_archived)) return slackError('is_archived');
    if (typeof text !== 'string' || text === '') return slackError('no_text');
    return this.scriptedAnswers.shift() ?? null;
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>, retryAfter: number): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return { status: 429, headers: { 'retry-after': String(retryAfter) }, json: { ok: false, error: 'ratelimited' } };
      case 'unavailable':
        return { status: 503, text: '<html><body>Slack is temporarily unavailable</body></html>' };
      case 'refused':
        return slackError('channel_not_found');
      case 'unauthorized':
        return slackError('invalid_auth');
    }
  }

  protected override other(request: RecordedRequest): FakeAnswer {
    const route = `${request.method} ${request.path}`;
    if (route === 'POST /auth.test') {
      if (this.authTestUnavailable) return { status: 503, text: '<html><body>Slack is temporarily unavailable</body></html>' };
      return (
        authRefusal(request) ?? {
          status: 200,
          json: {
            ok: true,
            url: 'https://acme.slack.com/',
            team: 'Acme',
            user: 'deliverybot',
            team_id: 'T0ACME',
            user_id: 'U0BOT',
            bot_id: 'B0BOT',
          },
        }
      );
    }
    if (route !== 'POST /conversations.open' && route !== 'GET /conversations.list')
      return { status: 404, json: { ok: false, error: 'unknown_method' } };
    const refusal = authRefusal(request);
    if (refusal) return refusal;
    return route === 'GET /conversations.list' ? this.list(request.query) : this.open(request);
  }

  private open(request: RecordedRequest): FakeAnswer {
    const refusal = jsonRefusal(request);
    if (refusal) return refusal;
    const users = request.body?.users;
    if (typeof users !== 'string' || users === '') return slackError('users_list_not_supplied');
    const channel = this.users.get(users);
    if (channel === undefined) return slackError('user_not_found');
    this.openedDirectChannels.add(channel);
    return { status: 200, json: { ok: true, channel: { id: channel } } };
  }

  private list(query: URLSearchParams): FakeAnswer {
    if (query.get('types') !== 'public_channel,private_channel') return slackError('invalid_types');
    const listed = this.channels.filter((channel) => query.get('exclude_archived') !== 'true' || !channel.is_archived);
    const cursor = query.get('cursor') ?? '';
    const start =
      cursor === ''
        ? 0
        : Number(
            Buffer.from(cursor, 'base64')
              .toString('utf8')
              .replace(/^offset:/, ''),
          );
    if (!Number.isInteger(start) || start < 0 || start > listed.length) return slackError('invalid_cursor');
    const end = start + Math.min(this.pageSize, Number(query.get('limit') ?? '100'));
    const nextCursor = end < listed.length ? Buffer.from(`offset:${end}`).toString('base64') : '';
    const channels = listed.slice(start, end).map((channel) => ({ is_channel: true, is_private: false, is_archived: false, ...channel }));
    return { status: 200, json: { ok: true, channels, response_metadata: { next_cursor: nextCursor } } };
  }

  /** Slack takes a channel id the bot is in, or a direct-message channel it opened; never a user id. */
  private canPostTo(channel: string): boolean {
    return this.channels.some((known) => known.id === channel) || this.openedDirectChannels.has(channel);
  }
}

function slackError(error: string): FakeAnswer {
  return { status: 200, json: { ok: false, error } };
}

function authRefusal(request: RecordedRequest): FakeAnswer | null {
  const header = request.headers.authorization;
  if (header === undefined) return slackError('not_authed');
  return header === `Bearer ${SLACK_TOKEN}` ? null : slackError('invalid_auth');
}

/** Slack reads a POST body as JSON only when it is declared so; anything else lacks the arguments. */
function jsonRefusal(request: RecordedRequest): FakeAnswer | null {
  const json = String(request.headers['content-type'] ?? '').startsWith('application/json');
  return json && typeof request.body === 'object' && request.body !== null ? null : slackError('invalid_arguments');
}
