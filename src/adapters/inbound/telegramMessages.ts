/**
 * Telegram updates read as inbound messages: which messages are for the bot (a private chat, or
 * in a group a mention, a command or a reply), and their text without the bot's mentions. The
 * long polling that fetches the updates is TelegramInboundSource.
 */
import type { InboundMessage } from '../../domain/chat/inboundMessage.js';

export const TELEGRAM = 'telegram';

export interface TelegramUser {
  id?: number;
  is_bot?: boolean;
  first_name?: string;
  username?: string;
}

interface TelegramEntity {
  type?: string;
  offset?: number;
  length?: number;
  user?: TelegramUser;
}

interface TelegramMessage {
  message_id?: number;
  message_thread_id?: number;
  is_topic_message?: boolean;
  from?: TelegramUser;
  sender_chat?: unknown;
  chat?: { id?: number; type?: string };
  text?: string;
  entities?: TelegramEntity[];
  reply_to_message?: { from?: TelegramUser; forum_topic_created?: unknown };
}

export interface TelegramUpdate {
  update_id?: number;
  message?: TelegramMessage;
}

/** The bot as getMe names it: its user id (replies to it) and @username (mentions of it). */
export interface Bot {
  id: number;
  username: string | null;
}

/**
 * The message of an update when it is for the bot: a text message from a person in a private
 * chat, or in a group one that mentions the bot, runs a command (for it or for no bot in
 * particular) or replies to it; null for anything else.
 */
export function inboundMessageOf(update: TelegramUpdate, bot: Bot): InboundMessage | null {
  const message = update.message;
  if (message === undefined || message === null || typeof message !== 'object') return null;
  const { from, chat, text } = message;
  if (typeof text !== 'string' || typeof message.message_id !== 'number') return null;
  // Messages sent as a chat (an anonymous admin, a channel) carry no person to answer or allow.
  if (from === undefined || typeof from.id !== 'number' || from.is_bot === true || from.id === bot.id || message.sender_chat !== undefined)
    return null;
  if (chat === undefined || typeof chat.id !== 'number') return null;
  const entities = Array.isArray(message.entities) ? message.entities : [];
  if (chat.type !== 'private') {
    if (chat.type !== 'group' && chat.type !== 'supergroup') return null;
    if (!addressesBot(message, text, entities, bot)) return null;
  }
  const cleaned = withoutBotMentions(text, entities, bot).trim();
  if (cleaned === '') return null;
  return {
    conversation: {
      platform: TELEGRAM,
      chatId: String(chat.id),
      // Only a forum topic is a thread: a reply chain in an ordinary group also carries message_thread_id.
      threadId:
        message.is_topic_message === true && typeof message.message_thread_id === 'number' ? String(message.message_thread_id) : null,
    },
    userId: String(from.id),
    userName: from.username ?? from.first_name ?? null,
    messageId: String(message.message_id),
    text: cleaned,
  };
}

function addressesBot(message: TelegramMessage, text: string, entities: TelegramEntity[], bot: Bot): boolean {
  const reply = message.reply_to_message;
  // In a forum topic every message without a reply of its own answers the topic's first message.
  if (reply?.from?.id === bot.id && reply.forum_topic_created === undefined) return true;
  for (const entity of entities) {
    if (isBotMention(entity, text, bot)) return true;
    if (entity.type === 'bot_command' && entity.offset === 0) {
      const addressee = commandAddressee(entity, text);
      if (addressee === null || sameUsername(addressee, bot)) return true;
    }
  }
  return false;
}

/** The bot's @username or a text mention of it, as Telegram marked it in the text. */
function isBotMention(entity: TelegramEntity, text: string, bot: Bot): boolean {
  if (entity.type === 'text_mention') return entity.user?.id === bot.id;
  return entity.type === 'mention' && sameUsername(slice(text, entity).replace(/^@/, ''), bot);
}

/** `bot` of `/ask@bot`; null for a command that names no bot. */
function commandAddressee(entity: TelegramEntity, text: string): string | null {
  const command = slice(text, entity);
  const at = command.indexOf('@');
  return at === -1 ? null : command.slice(at + 1);
}

function sameUsername(name: string, bot: Bot): boolean {
  return bot.username !== null && name.toLowerCase() === bot.username.toLowerCase();
}

function slice(text: string, entity: TelegramEntity): string {
  const offset = entity.offset ?? 0;
  return text.slice(offset, offset + (entity.length ?? 0));
}

/**
 * The text without the bot's mentions and without the `@bot` of a command; a mention that opens
 * the text takes a following `,` or `:` with it. Entity offsets are UTF-16 code units, as are
 * JavaScript string indices.
 */
function withoutBotMentions(text: string, entities: TelegramEntity[], bot: Bot): string {
  const cuts: Array<{ start: number; end: number }> = [];
  for (const entity of entities) {
    if (typeof entity.offset !== 'number' || typeof entity.length !== 'number') continue;
    if (isBotMention(entity, text, bot)) cuts.push({ start: entity.offset, end: entity.offset + entity.length });
    if (entity.type === 'bot_command') {
      const addressee = commandAddressee(entity, text);
      if (addressee !== null && sameUsername(addressee, bot))
        cuts.push({ start: entity.offset + entity.length - addressee.length - 1, end: entity.offset + entity.length });
    }
  }
  let result = text;
  for (const cut of cuts.sort((a, b) => b.start - a.start)) {
    let before = result.slice(0, cut.start);
    let after = result.slice(cut.end);
    if (before.trim() === '') {
      before = '';
      after = after.replace(/^[,:]?\s*/, '');
    } else if (/\s$/.test(before)) {
      after = after.replace(/^[,:](?=\s|$)/, '').replace(/^[ \t]+/, '');
    }
    result = before + after;
  }
  return result;
}
