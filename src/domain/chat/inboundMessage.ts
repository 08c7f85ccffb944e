/**
 * A conversation on a chat platform: a chat (a private chat, a group, a channel) and, where the
 * platform has them, a thread or topic inside it. Every message in one conversation shares its
 * history, and its turns are taken one at a time.
 */
export interface ConversationKey {
  /** The platform's name as delivery targets write it: `telegram`, `slack`, `discord`. */
  platform: string;
  /** The platform's id of the chat or channel, as its send API takes it. */
  chatId: string;
  /** A thread or topic inside the chat (Telegram `message_thread_id`, Slack `thread_ts`, a Discord thread's channel id); null for none. */
  threadId: string | null;
}

/**
 * One message a person sent to the bot, as a receiver hands it over: already judged to be for
 * the bot (a private chat, a mention, a reply to the bot), with the mention of the bot taken out
 * of the text. Who may talk to the bot is judged after, by the conversation use case.
 */
export interface InboundMessage {
  conversation: ConversationKey;
  /** The platform's id of the person who wrote it (what `platforms.<name>.allowed_users` lists). */
  userId: string;
  /** A name to show in logs and the job's origin, when the platform gives one. */
  userName: string | null;
  /** The platform's id of the message (Telegram `message_id`, Slack `ts`, Discord snowflake). */
  messageId: string;
  text: string;
}

/** `telegram:-100123:42`, `slack:C0123`: the conversation as one string, the form of a delivery target. */
export function conversationLabel(key: ConversationKey): string {
  return key.threadId === null ? `${key.platform}:${key.chatId}` : `${key.platform}:${key.chatId}:${key.threadId}`;
}

/**
 * How many answered message ids a store of conversations remembers per conversation, to know a
 * message handed over again (a receiver redelivers recent messages, never old ones).
 */
export const ANSWERED_IDS_REMEMBERED = 200;
