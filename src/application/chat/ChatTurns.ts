/**
 * One agent turn in a chat conversation, on the run pipeline (docs/architecture.md): the
 * conversation's recent exchanges, memory and the platform's toolsets (AskAgent, whose context
 * RunContexts builds with the chat skills policy), "typing…" while it runs, the answer back to
 * the same chat and thread through AnswerDelivery, a failure answered in one sentence (the run
 * pipeline's error mapping), and the message marked answered in the conversation store.
 */
import { inject, injectable, optional } from 'inversify';
import { conversationLabel, type InboundMessage } from '../../domain/chat/inboundMessage.js';
import { errorText } from '../../domain/errors.js';
import { ownEntry } from '../../domain/ownEntry.js';
import type { ChatSettings } from '../ports/ChatSettings.js';
import type { ConversationStore } from '../ports/ConversationStore.js';
import type { Logger } from '../ports/Logger.js';
import { NO_TRACING, type RunTracing } from '../ports/RunTracing.js';
import { TOKENS } from '../ports/tokens.js';
import { AnswerDelivery } from '../runs/AnswerDelivery.js';
import { chatFailureReply } from '../runs/runErrors.js';
import { AskAgent } from './AskAgent.js';

/** Takes chat turns. */
@injectable()
export class ChatTurns {
  constructor(
    @inject(AskAgent) private readonly agent: AskAgent,
    @inject(TOKENS.ConversationStore) private readonly store: ConversationStore,
    @inject(AnswerDelivery) private readonly answers: AnswerDelivery,
    @inject(TOKENS.ChatSettings) private readonly settings: ChatSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    /** One trace per turn, its delivery included (docs/traces.md). */
    @inject(TOKENS.RunTracing) @optional() private readonly tracing: RunTracing = NO_TRACING,
  ) {}

  /** The turn of `message`, answered in its conversation, "typing…" shown until its answer (`typing` aborted then); never throws. */
  async take(message: InboundMessage, typing: AbortController): Promise<void> {
    const { conversation } = message;
    const trace = this.tracing.start({ kind: 'chat_turn', platform: conversation.platform, conversation: conversationLabel(conversation) });
    let failed: string | null = null;
    try {
      await trace.within(() => this.answer(message, typing, (error) => (failed = error)));
    } finally {
      trace.end(failed === null ? { outcome: 'answered' } : { outcome: 'failed', error: failed });
    }
  }

  private async answer(message: InboundMessage, shown: AbortController, onFailure: (error: string) => void): Promise<void> {
    const { conversation } = message;
    let answer: string | null = null;
    let reply: string;
    try {
      const access = ownEntry(this.settings.platforms, conversation.platform)!;
      const result = await this.agent.execute({
        question: message.text,
        conversation: await this.store.history(conversation, this.settings.historyTurns),
        toolsets: access.toolsets ?? undefined,
        origin: {
          platform: conversation.platform,
          chat_id: conversation.chatId,
          thread_id: conversation.threadId,
          user_id: message.userId,
          user_name: message.userName,
        },
      });
      answer = result.answer.trim();
      reply = answer === '' ? '(The agent gave no answer.)' : answer;
    } catch (error) {
      this.log.warn(`chat turn in ${conversationLabel(conversation)} failed`, { error: errorText(error) });
      onFailure(errorText(error));
      reply = chatFailureReply(error);
    } finally {
      shown.abort();
    }
    const target = {
      kind: 'platform',
      platform: conversation.platform,
      destination: conversation.chatId,
      threadId: conversation.threadId,
    } as const;
    const [sent] = await this.answers.send([target], reply, { kind: 'chat', conversation: conversationLabel(conversation) });
    if (sent?.outcome === 'failed') {
      this.log.warn(`the answer in ${conversationLabel(conversation)} could not be sent`, { error: sent.reason ?? sent.error ?? '' });
    }
    await this.store.finish(message, answer, this.settings.historyTurns).catch((error: unknown) => {
      this.log.error(`chat message ${message.messageId} in ${conversationLabel(conversation)} could not be marked answered`, {
        error: errorText(error),
      });
    });
  }
}
