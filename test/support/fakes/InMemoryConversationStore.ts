import type { ConversationTurn } from '../../../src/application/ports/AgentRunner.js';
import type { ConversationStore } from '../../../src/application/ports/ConversationStore.js';
import { conversationLabel, type ConversationKey, type InboundMessage } from '../../../src/domain/chat/inboundMessage.js';

/** ConversationStore in memory, for tests of the conversation use case. */
export class InMemoryConversationStore implements ConversationStore {
  readonly kept: InboundMessage[] = [];
  readonly turns = new Map<string, ConversationTurn[]>();
  readonly answered = new Set<string>();

  async accept(message: InboundMessage): Promise<boolean> {
    const id = idOf(message);
    if (this.answered.has(id) || this.kept.some((kept) => idOf(kept) === id)) return false;
    this.kept.push(message);
    return true;
  }

  async pending(): Promise<InboundMessage[]> {
    return [...this.kept];
  }

  async history(key: ConversationKey, exchanges: number): Promise<ConversationTurn[]> {
    return exchanges <= 0 ? [] : (this.turns.get(conversationLabel(key)) ?? []).slice(-2 * exchanges);
  }

  async finish(message: InboundMessage, answer: string | null, keep: number): Promise<void> {
    const label = conversationLabel(message.conversation);
    if (answer !== null) {
      const turns = [
        ...(this.turns.get(label) ?? []),
        { role: 'user' as const, content: message.text },
        { role: 'assistant' as const, content: answer },
      ];
      this.turns.set(label, keep <= 0 ? [] : turns.slice(-2 * keep));
    }
    this.answered.add(idOf(message));
    const index = this.kept.findIndex((kept) => idOf(kept) === idOf(message));
    if (index >= 0) this.kept.splice(index, 1);
  }
}

function idOf(message: InboundMessage): string {
  return `${conversationLabel(message.conversation)}#${message.messageId}`;
}
