import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const DISCORD_TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0.GtEsT1.test-discord-bot-token';

export interface FakeDiscordChannel {
  id: string;
  name: string;
  /** Discord's channel type: 0 text, 2 voice, 4 category, 5 announcement, 11 public thread, 15 forum … */
  type: number;
}

export interface FakeDiscordGuild {
  id: string;
  name: string;
  channels: FakeDiscordChannel[];
}

/** Two servers the bot has joined, both with a #general, as a real bot often finds them. */
export const OPS = {
  guild: '900000000000000001',
  general: '900000000000000011',
  releases: '900000000000000012',
  /** A thread in #general: a channel of its own, but never in a guild's channel list. */
  generalThread: '900000000000000031',
};
export const BUILDS = { guild: '900000000000000002', general: '900000000000000021', deploys: '900000000000000022' };
/** A channel in a server the bot has not joined. */
export const FOREIGN_CHANNEL = '900000000000000099';

export const TWO_GUILDS: FakeDiscordGuild[] = [
  {
    id: OPS.guild,
    name: 'Ops',
    channels: [
      { id: '900000000000000010', name: 'Text Channels', type: 4 },
      { id: OPS.general, name: 'general', type: 0 },
      { id: OPS.releases, name: 'releases', type: 5 },
      { id: '900000000000000013', name: 'Lounge', type: 2 },
      { id: '900000000000000014', name: 'ideas', type: 15 },
    ],
  },
  {
    id: BUILDS.guild,
    name: 'Builds',
    channels: [
      { id: BUILDS.general, name: 'general', type: 0 },
      { id: BUILDS.deploys, name: 'deploys', type: 0 },
    ],
  },
];

const API = '/api/v10';
const SNOWFLAKE = /^\d{15,21}$/;
const MESSAGES_PATH = /^\/api\/v10\/channels\/([^/]+)\/messages$/;
const TYPING_PATH = /^\/api\/v10\/channels\/([^/]+)\/typing$/;
/** Types Create Message accepts: text, voice (text in voice), announcement, threads. */
const POSTABLE_TYPES = new Set([0, 2, 5, 10, 11, 12]);

/**
 * Discord's REST API v10 (https://discord.com/developers/docs/reference) under `/api/v10`: Create
 * Message, the bot's guilds and a guild's channels, Get Gateway Bot and Trigger Typing Indicator,
 * answered and refused the way Discord does (`{message, code}`, a 429 with `Retry-After` and
 * `retry_after`).
 */
export class FakeDiscordServer extends HttpFakePlatform {
  readonly platform = 'discord';
  readonly target = `discord:${BUILDS.deploys}`;
  private readonly channels = new Map<string, FakeDiscordChannel>();
  private readonly cannedAnswers: FakeAnswer[] = [];
  /** What `GET /gateway/bot` gives as the Gateway's address: a FakeDiscordGateway's, for receiver tests. */
  gatewayUrl = 'wss://gateway.discord.gg';

  constructor(readonly guilds: FakeDiscordGuild[] = TWO_GUILDS) {
    super();
    for (const channel of guilds.flatMap((guild) => guild.channels)) this.channels.set(channel.id, channel);
    this.channels.set(OPS.generalThread, { id: OPS.generalThread, name: 'nightly build', type: 11 });
  }

  get settings(): Record<string, string> {
    return { bot_token: DISCORD_TOKEN, base_url: `${this.url}${API}`, home_channel: OPS.general };
  }

  static start(guilds?: FakeDiscordGuild[]): Promise<FakeDiscordServer> {
    return new FakeDiscordServer(guilds).start();
  }

  /** The next send gets `answer` instead of Discord's usual one, and does not count as delivered. */
  answerNextSendWith(answer: FakeAnswer): void {
    this.cannedAnswers.push(answer);
  }

  /** `refused`: a 404 for `/users/@me`; `anonymous`: a user without `username`. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.method === 'GET' && request.path === `${API}/users/@me`,
      oddity === 'refused'
        ? { status: 404, json: { message: '404: Not Found', code: 0 } }
        : { status: 200, json: { id: '1098765432109876543', bot: true } },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    return request.method === 'POST' && MESSAGES_PATH.test(request.path) ? String(request.body?.content ?? '') : null;
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const canned = this.cannedAnswers.shift();
    if (canned) return this.unrecord(canned);
    const refusal = this.refusalOf(request);
    if (refusal) return this.unrecord(refusal);
    const channelId = MESSAGES_PATH.exec(request.path)![1]!;
    return {
      status: 200,
      json: {
        id: `13000000000000${messageId.padStart(5, '0')}`,
        type: 0,
        channel_id: channelId,
        content: request.body.content,
        author: { id: '1098765432109876543', username: 'agent', bot: true },
        mentions: [],
        mention_roles: [],
        mention_everyone: false,
        timestamp: '2025-01-01T00:00:00.000000+00:00',
      },
    };
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>, retryAfter: number): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return {
          status: 429,
          headers: { 'retry-after': String(Math.ceil(retryAfter)), 'x-ratelimit-scope': 'user' },
          json: { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
        };
      case 'unavailable':
        return { status: 502, json: { message: '502: Bad Gateway', code: 0 } };
      case 'refused':
        return { status: 404, json: { message: 'Unknown Channel', code: 10003 } };
      case 'unauthorized':
        return UNAUTHORIZED;
    }
  }

  protected override other(request: RecordedRequest): FakeAnswer {
    if (!this.authorized(request)) return UNAUTHORIZED;
    if (request.method === 'GET' && request.path === `${API}/users/@me`)
      return { status: 200, json: { id: '1098765432109876543', username: 'deliverybot', bot: true } };
    if (request.method === 'GET' && request.path === `${API}/users/@me/guilds`) return { status: 200, json: this.guildPage(request.query) };
    if (request.method === 'GET' && request.path === `${API}/gateway/bot`) {
      return {
        status: 200,
        json: {
          url: this.gatewayUrl,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
        },
      };
    }
    const typing = TYPING_PATH.exec(request.path);
    if (request.method === 'POST' && typing) {
      // Trigger Typing Indicator: 204 in any channel the bot can see, direct messages included.
      if (typing[1] === FOREIGN_CHANNEL) return { status: 403, json: { message: 'Missing Access', code: 50001 } };
      return SNOWFLAKE.test(typing[1]!) ? { status: 204 } : { status: 404, json: { message: 'Unknown Channel', code: 10003 } };
    }
    const channels = new RegExp(`^${API}/guilds/([^/]+)/channels$`).exec(request.path);
    if (request.method === 'GET' && channels) {
      const guild = this.guilds.find((candidate) => candidate.id === channels[1]);
      if (!guild) return { status: 404, json: { message: 'Unknown Guild', code: 10004 } };
      return {
        status: 200,
        json: guild.channels.map((channel, position) => ({ ...channel, guild_id: guild.id, position, parent_id: null })),
      };
    }
    return { status: 404, json: { message: '404: Not Found', code: 0 } };
  }

  private refusalOf(request: RecordedRequest): FakeAnswer | null {
    if (!this.authorized(request)) return UNAUTHORIZED;
    const channelId = decodeURIComponent(MESSAGES_PATH.exec(request.path)![1]!);
    if (!SNOWFLAKE.test(channelId)) return invalidFormBody('channel_id', 'NUMBER_TYPE_COERCE', `Value "${channelId}" is not snowflake.`);
    if (channelId === FOREIGN_CHANNEL) return { status: 403, json: { message: 'Missing Access', code: 50001 } };
    const channel = this.channels.get(channelId);
    if (!channel) return { status: 404, json: { message: 'Unknown Channel', code: 10003 } };
    if (!POSTABLE_TYPES.has(channel.type))
      return { status: 400, json: { message: 'Cannot send messages in a non-text channel', code: 50008 } };
    const content: unknown = request.body?.content;
    if (typeof content !== 'string' || content === '')
      return { status: 400, json: { message: 'Cannot send an empty message', code: 50006 } };
    if (content.length > 2000) return invalidFormBody('content', 'BASE_TYPE_MAX_LENGTH', 'Must be 2000 or fewer in length.');
    return null;
  }

  private authorized(request: RecordedRequest): boolean {
    return request.headers.authorization === `Bot ${DISCORD_TOKEN}`;
  }

  /** `GET /users/@me/guilds?limit&after`: guilds in id order after `after`, at most `limit` (200 by default). */
  private guildPage(query: URLSearchParams): unknown[] {
    const after = BigInt(query.get('after') ?? '0');
    const limit = Math.min(Number(query.get('limit') ?? 200), 200);
    return this.guilds
      .filter((guild) => BigInt(guild.id) > after)
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
      .slice(0, limit)
      .map((guild) => ({ id: guild.id, name: guild.name, icon: null, owner: false, permissions: '2048', features: [] }));
  }

  /** A refused send was never delivered. */
  private unrecord(answer: FakeAnswer): FakeAnswer {
    return { ...answer, accepted: false };
  }
}

const UNAUTHORIZED: FakeAnswer = { status: 401, json: { message: '401: Unauthorized', code: 0 } };

function invalidFormBody(field: string, code: string, message: string): FakeAnswer {
  return { status: 400, json: { message: 'Invalid Form Body', code: 50035, errors: { [field]: { _errors: [{ code, message }] } } } };
}
