import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import type { DirectoryChannel } from '../../domain/delivery/channelDirectory.js';
import { apiRoot, CREDENTIALS_CHECK, PlatformHttp, type PlatformAnswer, type RequestPurpose } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

interface DiscordError {
  message?: string;
  code?: number;
  /** Field errors of a 50035 Invalid Form Body, nested like the request body. */
  errors?: unknown;
  retry_after?: number;
}

interface DiscordChannel {
  id: string;
  name?: string;
  type: number;
}

/** GUILD_TEXT and GUILD_ANNOUNCEMENT: the listed channel types a bot can post text into. */
const TEXT_CHANNEL_TYPES = new Set([0, 5]);
/** The most guilds `GET /users/@me/guilds` returns at once. */
const GUILD_PAGE = 200;
// Discord asks every HTTP client to identify itself in this form.
const USER_AGENT = 'DiscordBot (agent, 0.1)';

/**
 * Discord REST API v10, Create Message (https://discord.com/developers/docs/resources/message#create-message)
 * as the bot. Mentions are never parsed, so an agent's answer cannot ping @everyone, a role or a
 * user. A thread is a channel of its own in this API, so a part for a thread is posted to the
 * thread's id.
 */
export class DiscordSender implements PlatformSender {
  readonly platform = 'discord';
  readonly partLimit = 2000;
  private readonly http: PlatformHttp;

  constructor(private readonly settings: PlatformSettings) {
    this.http = new PlatformHttp(settings, ['bot_token']);
  }

  async send(to: ChatAddress, text: string): Promise<SentPart> {
    const channelId = to.threadId ?? to.chatId;
    const answer = await this.http.call({
      url: this.url(`/channels/${encodeURIComponent(channelId)}/messages`),
      headers: this.headers(),
      json: { content: text, allowed_mentions: { parse: [] } },
    });
    if (isSuccess(answer)) {
      const messageId = (answer.json as { id?: unknown } | undefined)?.id;
      if (typeof messageId === 'string' && messageId !== '') return { messageId };
      throw this.http.unconfirmed(answer);
    }
    throw this.failure(
      answer,
      'the message',
      `the bot needs View Channel and Send Messages in channel ${channelId}, in a server it has joined`,
    );
  }

  /** `GET /users/@me` (https://discord.com/developers/docs/resources/user#get-current-user): the bot's user name. */
  async whoAmI(): Promise<string> {
    const answer = await this.http.call({ url: this.url('/users/@me'), headers: this.headers() });
    const user = (answer.json ?? {}) as { username?: unknown; id?: unknown };
    if (isSuccess(answer) && typeof user.username === 'string') return user.username;
    if (isSuccess(answer)) throw this.http.unconfirmed(answer, 'check');
    throw this.failure(answer, CREDENTIALS_CHECK, 'the bot token may not read its own user', 'check');
  }

  /** Every text and announcement channel of every server the bot is in; threads are not listed. */
  async listChannels(): Promise<DirectoryChannel[]> {
    const channels: DirectoryChannel[] = [];
    for (const guild of await this.guilds()) {
      const listed = await this.getList<DiscordChannel>(`/guilds/${encodeURIComponent(guild.id)}/channels`);
      for (const channel of listed) {
        if (TEXT_CHANNEL_TYPES.has(channel.type) && channel.name) channels.push({ id: channel.id, name: channel.name });
      }
    }
    return channels;
  }

  private async guilds(): Promise<Array<{ id: string }>> {
    const guilds: Array<{ id: string }> = [];
    for (let after = '0'; ;) {
      const page = await this.getList<{ id: string }>(`/users/@me/guilds?limit=${GUILD_PAGE}&after=${after}`);
      guilds.push(...page);
      if (page.length < GUILD_PAGE) return guilds;
      after = page.at(-1)!.id;
    }
  }

  private async getList<T>(path: string): Promise<T[]> {
    const answer = await this.http.call({ url: this.url(path), headers: this.headers() });
    if (isSuccess(answer) && Array.isArray(answer.json)) return answer.json as T[];
    if (isSuccess(answer)) {
      throw new PlatformSendError(
        'refused',
        `discord answered GET ${path.split('?')[0]} with HTTP ${answer.status} but no list (${this.http.clean(answer.text) || 'empty answer'})`,
      );
    }
    throw this.failure(answer, 'the channel listing', 'the bot needs View Channel in the servers it has joined');
  }

  /**
   * Discord's 401 is a bad token; its 403 is a channel or server the bot may not use, which a new
   * token would not fix, so it is refused with what to grant instead of naming the credentials.
   */
  private failure(answer: PlatformAnswer, what: string, forbiddenHint: string, purpose: RequestPurpose = 'send'): PlatformSendError {
    const reply = (answer.json ?? {}) as DiscordError;
    const said = describeError(reply);
    if (answer.status === 401) return this.http.refusedCredentials(reply.message ?? 'HTTP 401');
    if (answer.status === 403) {
      const detail = this.http.clean(said ?? answer.text);
      return new PlatformSendError('refused', `discord refused ${what} (HTTP 403${detail ? `: ${detail}` : ''}); ${forbiddenHint}`);
    }
    return this.http.failure(answer, said, reply.retry_after, purpose);
  }

  private url(path: string): string {
    return `${apiRoot(this.settings.require('base_url'))}${path}`;
  }

  private headers(): Record<string, string> {
    return { authorization: `Bot ${this.settings.require('bot_token')}`, 'user-agent': USER_AGENT };
  }
}

function isSuccess(answer: PlatformAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

/** `Unknown Channel (code 10003)`, with the first field error of an Invalid Form Body. */
function describeError(reply: DiscordError): string | undefined {
  if (typeof reply.message !== 'string') return undefined;
  const code = typeof reply.code === 'number' ? ` (code ${reply.code})` : '';
  const field = firstFieldError(reply.errors, []);
  return `${reply.message}${code}${field ? `: ${field}` : ''}`;
}

function firstFieldError(errors: unknown, path: string[]): string | null {
  if (errors === null || typeof errors !== 'object') return null;
  const own = (errors as { _errors?: Array<{ message?: unknown }> })._errors?.[0]?.message;
  if (typeof own === 'string') return `${path.join('.') || 'body'}: ${own}`;
  for (const [key, nested] of Object.entries(errors)) {
    const found = firstFieldError(nested, [...path, key]);
    if (found) return found;
  }
  return null;
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new DiscordSender(settings);
}
