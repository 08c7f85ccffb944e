import type { ChatAddress, PlatformSender, SentPart } from '../../application/ports/PlatformSender.js';
import { apiRoot, PlatformHttp } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

interface TelegramAnswer {
  ok?: boolean;
  result?: { message_id?: number; username?: string; id?: number };
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

/**
 * Telegram Bot API `sendMessage` (https://core.telegram.org/bots/api#sendmessage). Plain text, so
 * no markup can make Telegram refuse an answer; a thread is a forum topic (`message_thread_id`).
 */
export class TelegramSender implements PlatformSender {
  readonly platform = 'telegram';
  readonly partLimit = 4096;
  private readonly http: PlatformHttp;

  constructor(private readonly settings: PlatformSettings) {
    this.http = new PlatformHttp(settings, ['bot_token']);
  }

  async send(to: ChatAddress, text: string): Promise<SentPart> {
    const url = `${apiRoot(this.settings.require('base_url'))}/bot${this.settings.require('bot_token')}/sendMessage`;
    const body: Record<string, unknown> = { chat_id: to.chatId, text, disable_web_page_preview: true };
    if (to.threadId !== null) body.message_thread_id = Number(to.threadId);
    const answer = await this.http.call({ url, json: body });
    const reply = (answer.json ?? {}) as TelegramAnswer;
    const messageId = reply.result?.message_id;
    if (answer.status === 200 && reply.ok === true && typeof messageId === 'number') return { messageId: String(messageId) };
    if (answer.status === 200) throw this.http.unconfirmed(answer);
    throw this.http.failure(answer, reply.description, reply.parameters?.retry_after);
  }

  /** `getMe` (https://core.telegram.org/bots/api#getme): the bot's @username. */
  async whoAmI(): Promise<string> {
    const url = `${apiRoot(this.settings.require('base_url'))}/bot${this.settings.require('bot_token')}/getMe`;
    const answer = await this.http.call({ url });
    const reply = (answer.json ?? {}) as TelegramAnswer;
    const { username, id } = reply.result ?? {};
    if (answer.status === 200 && reply.ok === true && (username || id !== undefined)) return username ? `@${username}` : `bot ${id}`;
    if (answer.status === 200) throw this.http.unconfirmed(answer, 'check');
    throw this.http.failure(answer, reply.description, reply.parameters?.retry_after, 'check');
  }
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new TelegramSender(settings);
}
