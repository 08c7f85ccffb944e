/**
 * Slack events read as inbound messages: which events carry a message for the bot (a direct
 * message, a mention in a channel, from a person), the conversation it belongs to, and its text
 * without the mention. Receiving the events over HTTP is SlackEventsSource.
 */
import type { InboundMessage } from '../../domain/chat/inboundMessage.js';

/** The fields of Slack's event envelope and of a message event that this receiver reads. */
export interface SlackEnvelope {
  type?: unknown;
  challenge?: unknown;
  event_id?: unknown;
  authorizations?: Array<{ user_id?: unknown }>;
  event?: SlackEvent;
}

interface SlackEvent {
  type?: unknown;
  subtype?: unknown;
  bot_id?: unknown;
  user?: unknown;
  text?: unknown;
  ts?: unknown;
  thread_ts?: unknown;
  channel?: unknown;
  channel_type?: unknown;
  user_profile?: { display_name?: unknown; real_name?: unknown; name?: unknown };
}

/**
 * The message an event carries for the bot, or null when it carries none; `botUserId` (what
 * auth.test named) stands for the bot when the event names no authorized user.
 */
export function slackMessageOf(envelope: SlackEnvelope, botUserId: string | null): InboundMessage | null {
  const event = envelope.event;
  if (typeof event !== 'object' || event === null) return null;
  if (event.type !== 'message' && event.type !== 'app_mention') return null;
  // Edits, deletions, joins, bot messages, file shares …: only what a person wrote as a plain message.
  if (event.bot_id !== undefined || event.subtype !== undefined) return null;
  const { user, channel, ts } = event;
  if (!nonEmpty(user) || !nonEmpty(channel) || !nonEmpty(ts) || typeof event.text !== 'string') return null;
  const authorized = envelope.authorizations?.[0]?.user_id;
  const botUser = nonEmpty(authorized) ? authorized : botUserId;
  if (user === botUser) return null;
  const threadTs = nonEmpty(event.thread_ts) ? event.thread_ts : null;
  let threadId: string | null;
  if (event.type === 'message') {
    // In a channel, a message for the bot also comes as an app_mention; that one is taken.
    if (event.channel_type !== 'im') return null;
    threadId = threadTs;
  } else {
    // A mention in a direct message comes as a `message` event too; that one is taken.
    if (channel.startsWith('D')) return null;
    threadId = threadTs ?? ts;
  }
  const text = readableText(withoutMention(event.text, botUser));
  if (text === '') return null;
  return {
    conversation: { platform: 'slack', chatId: channel, threadId },
    userId: user,
    userName: nameOf(event.user_profile),
    messageId: ts,
    text,
  };
}

export function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** The text without `<@BOT>` (or `<@BOT|name>`), the space around a mention closed up. */
function withoutMention(text: string, botUser: string | null): string {
  if (botUser === null) return text.trim();
  const mention = new RegExp(`\\s*<@${escapeRegExp(botUser)}(?:\\|[^>]*)?>\\s*`, 'g');
  return text.replace(mention, ' ').trim();
}

/** Slack writes `&`, `<` and `>` that a person typed as `&amp;`, `&lt;`, `&gt;`. */
function readableText(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

function nameOf(profile: SlackEvent['user_profile']): string | null {
  if (typeof profile !== 'object' || profile === null) return null;
  for (const name of [profile.display_name, profile.real_name, profile.name]) if (nonEmpty(name)) return name;
  return null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
