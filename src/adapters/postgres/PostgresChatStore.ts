import type { ConversationTurn } from '../../application/ports/AgentRunner.js';
import type { ConversationStore } from '../../application/ports/ConversationStore.js';
import type { InboundCursorStore } from '../../application/ports/InboundChat.js';
import { ANSWERED_IDS_REMEMBERED, conversationLabel, type ConversationKey, type InboundMessage } from '../../domain/chat/inboundMessage.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import type { PostgresDatabase, PreparedStatement } from './PostgresDatabase.js';
import { jsonbText, storableText } from './jsonbText.js';

/**
 * Keeps message $2 of conversation $1 (its JSON $3) as pending, unless the conversation has it
 * already, pending or answered: one row comes back when it was kept. Two replicas handing over
 * one message at the same moment keep it once (the second waits for the first's row, then skips).
 */
const ACCEPT: PreparedStatement = {
  name: 'agent_chat_accept',
  text: `
    INSERT INTO agent_chat_messages (conversation, message_id, message) VALUES ($1, $2, $3::jsonb)
    ON CONFLICT (conversation, message_id) DO NOTHING
    RETURNING seq`,
};

/** Every pending message, in the order they were accepted. */
const PENDING: PreparedStatement = {
  name: 'agent_chat_pending',
  text: 'SELECT message FROM agent_chat_messages WHERE NOT answered ORDER BY seq',
};

/** Message $2 of conversation $1 answered: its JSON dropped, its id remembered. */
const ANSWERED = `
  INSERT INTO agent_chat_messages (conversation, message_id, answered) VALUES ($1, $2, true)
  ON CONFLICT (conversation, message_id) DO UPDATE SET answered = true, message = NULL`;

/** Forgets the answered ids of conversation $1 beyond the newest $2, never message $3's. */
const FORGET_ANSWERED = `
  DELETE FROM agent_chat_messages WHERE conversation = $1 AND answered AND message_id <> $3 AND seq < (
    SELECT seq FROM agent_chat_messages WHERE conversation = $1 AND answered
    ORDER BY seq DESC OFFSET ($2 - 1) LIMIT 1)`;

/**
 * Appends the turns $2 (a JSON array) to conversation $1 and keeps its last $3 turns, in one
 * statement: a conversation finished by two replicas at once loses neither exchange (the second
 * waits for the first's row and appends to what it wrote). $2 is already cut to $3 turns for a
 * conversation that had none.
 */
const APPEND_TURNS = `
  INSERT INTO agent_chat_conversations AS kept (conversation, turns) VALUES ($1, $2::jsonb)
  ON CONFLICT (conversation) DO UPDATE SET turns = (
    SELECT coalesce(jsonb_agg(each.turn ORDER BY each.place), '[]'::jsonb)
    FROM jsonb_array_elements(kept.turns || EXCLUDED.turns) WITH ORDINALITY AS each(turn, place)
    WHERE each.place > jsonb_array_length(kept.turns || EXCLUDED.turns) - $3
  )`;

/** The turns of conversation $1. */
const HISTORY: PreparedStatement = {
  name: 'agent_chat_history',
  text: 'SELECT turns FROM agent_chat_conversations WHERE conversation = $1',
};

const GET_CURSOR: PreparedStatement = {
  name: 'agent_chat_cursor_get',
  text: 'SELECT cursor FROM agent_chat_cursors WHERE platform = $1',
};

const SET_CURSOR: PreparedStatement = {
  name: 'agent_chat_cursor_set',
  text: `
    INSERT INTO agent_chat_cursors (platform, cursor) VALUES ($1, $2)
    ON CONFLICT (platform) DO UPDATE SET cursor = EXCLUDED.cursor`,
};

/** The conversation's label and the message id as their columns hold them. */
function keyOf(message: InboundMessage): [string, string] {
  return [storableText(conversationLabel(message.conversation)), storableText(message.messageId)];
}

const isText = (value: unknown): value is string => typeof value === 'string';

/** A stored message read back, or null when it is not one this version understands. */
function readMessage(value: unknown): InboundMessage | null {
  if (!isJsonObject(value) || !isJsonObject(value.conversation)) return null;
  const { platform, chatId, threadId } = value.conversation;
  const { userId, userName, messageId, text } = value;
  if (!isText(platform) || !isText(chatId) || !(threadId === null || isText(threadId))) return null;
  if (!isText(userId) || !(userName === null || isText(userName)) || !isText(messageId) || !isText(text)) return null;
  return { conversation: { platform, chatId, threadId }, userId, userName, messageId, text };
}

/** Stored turns read back; a turn this version does not understand is left out. */
function readTurns(value: unknown): ConversationTurn[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (turn): turn is ConversationTurn => isJsonObject(turn) && (turn.role === 'user' || turn.role === 'assistant') && isText(turn.content),
  );
}

/**
 * The gateway's chat state in PostgreSQL (docs/chat-platforms.md, docs/scaling.md), for gateways
 * sharing a database: messages accepted and not answered, and the ids of those answered, as rows
 * of `agent_chat_messages`; each conversation's recent exchanges as a row of
 * `agent_chat_conversations`; each receiver's cursor as a row of `agent_chat_cursors`. An accept
 * is one statement that commits before it resolves (the receiver acknowledges the message only
 * then); a finish is one transaction marking the message answered and appending the exchange,
 * keeping the last `keep`. Like the file store, a conversation remembers the ids of its last
 * ANSWERED_IDS_REMEMBERED answered messages. Text that a column cannot hold (a NUL, half of a
 * surrogate pair) is stored as U+FFFD. A failure is the database's DatabaseUnavailableError,
 * naming the database.
 */
export class PostgresChatStore implements ConversationStore, InboundCursorStore {
  constructor(private readonly database: PostgresDatabase) {}

  async accept(message: InboundMessage): Promise<boolean> {
    const rows = await this.database.query(ACCEPT, [...keyOf(message), jsonbText(message)]);
    return rows.length === 1;
  }

  async pending(): Promise<InboundMessage[]> {
    const rows = await this.database.query<{ message: unknown }>(PENDING);
    return rows.map((row) => readMessage(row.message)).filter((message) => message !== null);
  }

  async history(key: ConversationKey, exchanges: number): Promise<ConversationTurn[]> {
    if (exchanges <= 0) return [];
    const rows = await this.database.query<{ turns: unknown }>(HISTORY, [storableText(conversationLabel(key))]);
    return readTurns(rows[0]?.turns).slice(-2 * exchanges);
  }

  async finish(message: InboundMessage, answer: string | null, keep: number): Promise<void> {
    const [conversation, messageId] = keyOf(message);
    const kept = Math.max(0, Math.floor(keep)) * 2;
    await this.database.transaction(async (tx) => {
      await tx.query(ANSWERED, [conversation, messageId]);
      await tx.query(FORGET_ANSWERED, [conversation, ANSWERED_IDS_REMEMBERED, messageId]);
      if (answer === null) return;
      const turns: ConversationTurn[] = [
        { role: 'user', content: message.text },
        { role: 'assistant', content: answer },
      ];
      await tx.query(APPEND_TURNS, [conversation, jsonbText(turns.slice(turns.length - kept)), kept]);
    });
  }

  async get(platform: string): Promise<string | null> {
    const rows = await this.database.query<{ cursor: string }>(GET_CURSOR, [storableText(platform)]);
    return rows[0]?.cursor ?? null;
  }

  async set(platform: string, cursor: string): Promise<void> {
    await this.database.query(SET_CURSOR, [storableText(platform), storableText(cursor)]);
  }
}

/**
 * The chat state of the gateways sharing `database`: its ConversationStore and its
 * InboundCursorStore in one (the schema's migration 7, `chat`, applied).
 */
export function postgresChatStore(database: PostgresDatabase): ConversationStore & InboundCursorStore {
  return new PostgresChatStore(database);
}
