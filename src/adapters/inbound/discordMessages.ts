/**
 * Discord messages read as inbound messages: which MESSAGE_CREATE dispatches are for the bot (a
 * direct message, or in a server a mention of it or a reply to it, from a person) and their text
 * without the mention. DiscordGatewayConnection receives them.
 */
import type { InboundMessage } from '../../domain/chat/inboundMessage.js';
import { PLATFORM } from './discordGatewayProtocol.js';

/** Message types a person writes: DEFAULT and REPLY (joins, pins, thread notices … are not). */
const PERSON_MESSAGE_TYPES = new Set([0, 19]);

/** The message as handed over, when it is for the bot `botId`: see DiscordGatewaySource. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Discord's payloads are JSON off the wire; each field is checked where it is read
export function discordMessageOf(d: any, botId: string | undefined): InboundMessage | null {
  const author = d?.author;
  if (!botId || typeof author?.id !== 'string' || typeof d.id !== 'string' || typeof d.channel_id !== 'string') return null;
  if (author.bot === true || author.system === true || d.webhook_id !== undefined || author.id === botId) return null;
  if (!PERSON_MESSAGE_TYPES.has(d.type ?? 0)) return null;
  const content = typeof d.content === 'string' ? d.content : '';
  const direct = d.guild_id === undefined || d.guild_id === null;
  const mentioned =
    (Array.isArray(d.mentions) && d.mentions.some((user: { id?: unknown } | null) => user?.id === botId)) ||
    content.includes(`<@${botId}>`) ||
    content.includes(`<@!${botId}>`);
  const repliesToBot = d.referenced_message?.author?.id === botId;
  if (!direct && !mentioned && !repliesToBot) return null;
  const text = content.replace(new RegExp(`[ \\t]*<@!?${escapeRegExp(botId)}>[ \\t]*`, 'g'), ' ').trim();
  if (text === '') return null;
  const name = typeof author.global_name === 'string' && author.global_name !== '' ? author.global_name : author.username;
  return {
    conversation: { platform: PLATFORM, chatId: d.channel_id, threadId: null },
    userId: author.id,
    userName: typeof name === 'string' && name !== '' ? name : null,
    messageId: d.id,
    text,
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
