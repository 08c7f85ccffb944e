import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const MATTERMOST_TOKEN = 'k3xq9bn7wtfy8rj5mzc1ds4hpa';
/** Mattermost ids are 26 lowercase letters and digits. */
export const MATTERMOST_CHANNELS = {
  townSquare: { id: 'c1townsquare0000000000000a', name: 'town-square', display_name: 'Town Square', type: 'O' },
  releases: { id: 'c2releases0000000000000000', name: 'releases', display_name: 'Releases', type: 'O' },
  oncall: { id: 'c3oncall000000000000000000', name: 'on-call', display_name: 'On-call', type: 'P' },
  direct: { id: 'c4direct000000000000000000', name: 'u1botaccount00000000000000__u2someone00000000000000000', display_name: '', type: 'D' },
  group: { id: 'c5group0000000000000000000', name: '0f3c2a9e8d7b6a5f4e3d2c1b0a9f8e7d6c5b4a39', display_name: 'ann, bob, bot', type: 'G' },
} as const;
/** A post already in #releases that answers can be threaded under. */
export const MATTERMOST_ROOT_POST_ID = 'r1rootpost0000000000000000';
/** A channel id of the right shape that the bot account is not a member of. */
export const MATTERMOST_FOREIGN_CHANNEL_ID = 'c9elsewhere000000000000000';

const BOT_USER_ID = 'u1botaccount00000000000000';

interface Post {
  id: string;
  channel_id: string;
  root_id: string;
  message: string;
  pending_post_id: string;
}

/**
 * A Mattermost server's REST API v4 as https://api.mattermost.com describes it (and as the server
 * behaves where the reference is silent): `POST /api/v4/posts` answers 201 with the post, and
 * answers a `pending_post_id` it has seen with the post it already made; errors are
 * `{id, message, detailed_error, request_id, status_code}`; a 429 is the plain text
 * `limit exceeded` with `Retry-After` and `X-Ratelimit-Reset` in seconds; any path outside
 * `/api/` gets the web app's HTML page with 200.
 */
export class FakeMattermostServer extends HttpFakePlatform {
  readonly platform = 'mattermost';
  readonly target = `mattermost:${MATTERMOST_CHANNELS.releases.id}`;
  /** Posts this server made, oldest first. */
  readonly posts: Post[] = [
    { id: MATTERMOST_ROOT_POST_ID, channel_id: MATTERMOST_CHANNELS.releases.id, root_id: '', message: 'v2.4 is out', pending_post_id: '' },
  ];
  /** When set, a 429 carries exactly these headers instead of the server's own. */
  rateLimitHeaders: Record<string, string> | null = null;
  private answerLost = false;

  get settings(): Record<string, string> {
    return { url: this.url, token: MATTERMOST_TOKEN, home_channel: MATTERMOST_CHANNELS.townSquare.id };
  }

  static start(): Promise<FakeMattermostServer> {
    return new FakeMattermostServer().start();
  }

  /** The next post is made, but its answer is lost on the way back, as when a proxy times out. */
  loseNextAnswer(): void {
    this.answerLost = true;
  }

  /** `refused`: a 400 to `GET /api/v4/users/me`; `anonymous`: a user without `username`. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.method === 'GET' && request.path === '/api/v4/users/me',
      oddity === 'refused'
        ? error(400, 'api.context.invalid_url_param.app_error', 'Invalid or missing user_id parameter in request URL.')
        : { status: 200, json: { id: 'u1deliverybot000000000000a' } },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    return request.method === 'POST' && request.path === '/api/v4/posts' ? String(request.body?.message ?? '') : null;
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const refusal = this.authorizationProblem(request) ?? this.postProblem(request.body);
    if (refusal) return this.notPosted(refusal);
    const pendingPostId = typeof request.body.pending_post_id === 'string' ? request.body.pending_post_id : '';
    const earlier = pendingPostId === '' ? undefined : this.posts.find((post) => post.pending_post_id === pendingPostId);
    if (earlier) return this.notPosted({ status: 201, json: this.postJson(earlier) });
    const post: Post = {
      id: `p${messageId.padStart(25, '0')}`,
      channel_id: request.body.channel_id,
      root_id: request.body.root_id ?? '',
      message: request.body.message,
      pending_post_id: pendingPostId,
    };
    this.posts.push(post);
    if (this.answerLost) {
      this.answerLost = false;
      return { status: 504, text: '<html><body><h1>504 Gateway Time-out</h1></body></html>', headers: { 'content-type': 'text/html' } };
    }
    return { status: 201, json: this.postJson(post) };
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>, retryAfter: number): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return {
          status: 429,
          text: 'limit exceeded\n',
          headers: this.rateLimitHeaders ?? {
            'X-Ratelimit-Limit': '10',
            'X-Ratelimit-Remaining': '0',
            'X-Ratelimit-Reset': String(retryAfter),
            'Retry-After': String(retryAfter),
          },
        };
      case 'unavailable':
        return error(500, 'app.post.save.app_error', 'Unable to save the Post.');
      case 'refused':
        return error(404, 'app.channel.get.existing.app_error', 'Unable to find the existing channel.');
      case 'unauthorized':
        return sessionExpired();
    }
  }

  protected override other(request: RecordedRequest): FakeAnswer {
    if (!request.path.startsWith('/api/')) {
      return {
        status: 200,
        text: '<!doctype html><html><head><title>Mattermost</title></head><body><div id="root"></div></body></html>',
        headers: { 'content-type': 'text/html' },
      };
    }
    if (request.method === 'GET' && request.path === '/api/v4/users/me') {
      return this.authorizationProblem(request) ?? { status: 200, json: { id: 'u1deliverybot000000000000a', username: 'deliverybot' } };
    }
    if (request.method === 'GET' && request.path === '/api/v4/users/me/channels') {
      return this.authorizationProblem(request) ?? { status: 200, json: Object.values(MATTERMOST_CHANNELS).map(channelJson) };
    }
    return error(404, 'api.context.404.app_error', 'Sorry, we could not find the page.');
  }

  private authorizationProblem(request: RecordedRequest): FakeAnswer | null {
    return request.headers.authorization === `Bearer ${MATTERMOST_TOKEN}` ? null : sessionExpired();
  }

  private postProblem(body: any): FakeAnswer | null {
    if (body === null || typeof body !== 'object' || typeof body.channel_id !== 'string' || typeof body.message !== 'string') {
      return error(400, 'api.context.invalid_body_param.app_error', 'Invalid or missing post in request body.');
    }
    const member = Object.values(MATTERMOST_CHANNELS).some((channel) => channel.id === body.channel_id);
    if (!member) return error(403, 'api.context.permissions.app_error', 'You do not have the appropriate permissions.');
    if (body.root_id !== undefined && !this.posts.some((post) => post.id === body.root_id && post.channel_id === body.channel_id)) {
      return error(400, 'api.post.create_post.root_id.app_error', 'Invalid RootId parameter.');
    }
    return null;
  }

  /** This answer made no new post: it does not count as delivered. */
  private notPosted(answer: FakeAnswer): FakeAnswer {
    return { ...answer, accepted: false };
  }

  private postJson(post: Post): Record<string, unknown> {
    return {
      ...post,
      create_at: 1767225600000,
      update_at: 1767225600000,
      edit_at: 0,
      delete_at: 0,
      is_pinned: false,
      user_id: BOT_USER_ID,
      original_id: '',
      type: '',
      props: {},
      hashtags: '',
      reply_count: 0,
      metadata: {},
    };
  }
}

function error(status: number, id: string, message: string): FakeAnswer {
  return { status, json: { id, message, detailed_error: '', request_id: 'rq7d1xk3bfgy5pn8e6w4sz9cta', status_code: status } };
}

function sessionExpired(): FakeAnswer {
  return error(401, 'api.context.session_expired.app_error', 'Invalid or expired session, please login again.');
}

function channelJson(channel: (typeof MATTERMOST_CHANNELS)[keyof typeof MATTERMOST_CHANNELS]): Record<string, unknown> {
  return {
    ...channel,
    team_id: channel.type === 'D' || channel.type === 'G' ? '' : 't1engineering0000000000000',
    create_at: 1735689600000,
    update_at: 1735689600000,
    delete_at: 0,
    header: '',
    purpose: '',
    creator_id: BOT_USER_ID,
  };
}
