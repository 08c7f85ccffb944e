import type { ConversationKey, InboundMessage } from '../../domain/chat/inboundMessage.js';
import type { ConversationTurn } from './AgentRunner.js';

/**
 * The gateway's memory of chat conversations: the messages accepted and not yet answered (what
 * a restart still owes), and each conversation's recent exchanges, which the next turn is given.
 * Delivered cron results are never written here: the agent in a chat does not see them.
 */
export interface ConversationStore {
  /**
   * Keeps `message` until `finish` is called for it. False, and nothing kept, when the message is
   * already kept or was answered: a receiver that hands a message over twice costs nothing.
   */
  accept(message: InboundMessage): Promise<boolean>;
  /** Messages accepted and not finished, in the order they were accepted. */
  pending(): Promise<InboundMessage[]>;
  /** The conversation's last `exchanges` exchanges (the person's message and the answer each), oldest first. */
  history(key: ConversationKey, exchanges: number): Promise<ConversationTurn[]>;
  /**
   * Ends `message`: with an answer, the exchange joins the conversation's history (of which the
   * last `keep` exchanges are kept); with null (a turn that failed) history is left as it was.
   * Either way the message is no longer pending, and is remembered as answered.
   */
  finish(message: InboundMessage, answer: string | null, keep: number): Promise<void>;
}
