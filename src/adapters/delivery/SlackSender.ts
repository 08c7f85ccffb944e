import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import type { DirectoryChannel } from '../../domain/delivery/channelDirectory.js';
import {
  apiRoot,
  CREDENTIALS_CHECK,
  PlatformHttp,
  retryAfterMs,
  type PlatformAnswer,
  type PlatformRequest,
  type RequestPurpose,
} from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

interface SlackAnswer {
  ok?: boolean;
  error?: string;
  /** The scope a `missing_scope` answer asks for. */
  needed?: string;
  ts?: string;
  /** auth.test: the bot's user name and workspace. */
  user?: string;
  team?: string;
  channel?: { id?: string };
  channels?: Array<{ id?: string; name?: string }>;
  response_metadata?: { next_cursor?: string };
}

/** Slack's ways of saying the token is wrong, dead or absent. */
const CREDENTIAL_ERRORS = new Set(['invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'token_expired']);
/** Errors Slack documents as transient on its side: worth another attempt. */
const TRANSIENT_ERRORS = new Set(['service_unavailable', 'request_timeout', 'internal_error']);
/** A member id (Enterprise Grid ones start with W): Slack posts to a user only through a direct-message channel. */
const USER_ID = /^[UW][A-Z0-9]+$/;

/**
 * Slack Web API `chat.postMessage` (https://api.slack.com/methods/chat.postMessage), with
 * `conversations.open` for a user id and `conversations.list` for the channel directory. Slack
 * answers most errors as HTTP 200 with `{ok: false, error}`, so the body decides, not the status;
 * only `ok: true` with the message's `ts` counts as delivered.
 */
export class SlackSender implements PlatformSender {
  readonly platform = 'slack';
  readonly partLimit = 39_000;
  private readonly http: PlatformHttp;
  /** Direct-message channel per user id: `conversations.open` returns the same one every time. */
  private readonly directChannels = new Map<string, string>();

  constructor(private readonly settings: PlatformSettings) {
    this.http = new PlatformHttp(settings, ['bot_token']);
  }

  async send(to: ChatAddress, text: string): Promise<SentPart> {
    const body: Record<string, unknown> = { channel: await this.channelFor(to.chatId), text: escapeControlCharacters(text) };
    if (to.threadId !== null) body.thread_ts = to.threadId;
    const { answer, reply } = await this.call('chat.postMessage', { json: body });
    if (typeof reply.ts !== 'string' || reply.ts === '') throw this.http.unconfirmed(answer);
    return { messageId: reply.ts };
  }

  async listChannels(): Promise<DirectoryChannel[]> {
    const channels: DirectoryChannel[] = [];
    const seenCursors = new Set<string>();
    let cursor = '';
    do {
      const query = new URLSearchParams({ types: 'public_channel,private_channel', exclude_archived: 'true', limit: '200' });
      if (cursor !== '') query.set('cursor', cursor);
      const { reply } = await this.call(`conversations.list?${query}`, { method: 'GET' });
      for (const channel of reply.channels ?? []) {
        if (typeof channel.id === 'string' && typeof channel.name === 'string') channels.push({ id: channel.id, name: channel.name });
      }
      seenCursors.add(cursor);
      cursor = reply.response_metadata?.next_cursor ?? '';
    } while (cursor !== '' && !seenCursors.has(cursor));
    return channels;
  }

  /** `auth.test` (https://api.slack.com/methods/auth.test): the bot user and its workspace. */
  async whoAmI(): Promise<string> {
    const { reply } = await this.call('auth.test', { json: {} }, 'check');
    const user = reply.user ? `@${reply.user}` : 'the bot';
    return reply.team ? `${user} in ${reply.team}` : user;
  }

  private async channelFor(chatId: string): Promise<string> {
    if (!USER_ID.test(chatId)) return chatId;
    const known = this.directChannels.get(chatId);
    if (known !== undefined) return known;
    const { answer, reply } = await this.call('conversations.open', { json: { users: chatId } });
    const opened = reply.channel?.id;
    if (typeof opened !== 'string' || opened === '') throw this.http.unconfirmed(answer);
    this.directChannels.set(chatId, opened);
    return opened;
  }

  /** Calls one Web API method; resolves only on `ok: true`, throws the matching PlatformSendError otherwise. */
  private async call(
    method: string,
    request: Omit<PlatformRequest, 'url' | 'headers'>,
    purpose: RequestPurpose = 'send',
  ): Promise<{ answer: PlatformAnswer; reply: SlackAnswer }> {
    const answer = await this.http.call({
      ...request,
      url: `${apiRoot(this.settings.require('base_url'))}/${method}`,
      headers: { authorization: `Bearer ${this.settings.require('bot_token')}` },
    });
    const reply = (answer.json ?? {}) as SlackAnswer;
    const said = reply.error === 'missing_scope' && reply.needed ? `missing_scope, needs ${reply.needed}` : reply.error;
    if (answer.status !== 200) throw this.http.failure(answer, said, undefined, purpose);
    if (reply.ok === true) return { answer, reply };
    if (reply.error === undefined) throw this.http.unconfirmed(answer, purpose);
    if (CREDENTIAL_ERRORS.has(reply.error)) throw this.http.refusedCredentials(reply.error);
    const detail = this.http.clean(said ?? reply.error);
    if (reply.error === 'ratelimited' || reply.error === 'rate_limited') {
      throw new PlatformSendError('rate_limited', `slack is rate-limiting (${detail})`, retryAfterMs(answer.headers));
    }
    if (TRANSIENT_ERRORS.has(reply.error)) throw new PlatformSendError('unavailable', `slack is unavailable (${detail})`);
    const what = purpose === 'check' ? CREDENTIALS_CHECK : method.startsWith('chat.') ? 'the message' : method.split('?')[0];
    throw new PlatformSendError('refused', `slack refused ${what} (${detail})`);
  }
}

/**
 * Slack reads `<…>` as links and mentions (`<!channel>` pings everyone) and `&` as the start of an
 * entity; escaping the three makes an answer show as written.
 */
function escapeControlCharacters(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new SlackSender(settings);
}
