/**
 * One agent turn in a chat conversation, on the run pipeline (docs/architecture.md): the
 * conversation's recent exchanges, memory and the platform's toolsets (AskAgent, whose context
 * RunContexts builds with the chat skills policy), "typing…" while it runs, the answer back to
 * the same chat and thread through AnswerDelivery, a failure answered in one sentence (the run
 * pipeline's error mapping), and the message marked answered in the conversation store.
 */
import { inject, injectable } from 'inversify';
import { conversationLabel, type ConversationKey, type InboundMessage } from '../../domain/chat/inboundMessage.js';
import { errorText } from '../../domain/errors.js';
import { ownEntry } from '../../domain/ownEntry.js';
import type { ChatSettings } from '../ports/ChatSettings.js';
import type { ConversationStore } from '../ports/ConversationStore.js';
import type { Logger } from '../ports/Logger.js';
import type { Timer } from '../ports/Timer.js';
import { TOKENS } from '../ports/tokens.js';
import { AnswerDelivery } from '../runs/AnswerDelivery.js';
import { chatFailureReply } from '../runs/runErrors.js';
import { AskAgent } from './AskAgent.js';

/** How often "typing…" is shown again while a turn runs (platforms drop it after ~5 s). */
export const TYPING_EVERY_MS = 4_000;

/** Shows "typing…" in a conversation, where its platform can. */
export type ShowTyping = (conversation: ConversationKey) => Promise<void>;

/** Takes chat turns. */
@injectable()
export class ChatTurns {
  constructor(
    @inject(AskAgent) private readonly agent: AskAgent,
    @inject(TOKENS.ConversationStore) private readonly store: ConversationStore,
    @inject(AnswerDelivery) private readonly answers: AnswerDelivery,
    @inject(TOKENS.ChatSettings) private readonly settings: ChatSettings,
    @inject(TOKENS.Timer) private readonly timer: Timer,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /** The turn of `message`, answered in its conversation; never throws. */
  async take(message: InboundMessage, typing: ReadonlyMap<string, ShowTyping>): Promise<void> {
    const { conversation } = message;
    const shown = this.showTypingWhile(conversation, typing.get(conversation.platform));
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

  /** Shows "typing…" now and every few seconds until the returned controller is aborted. */
  private showTypingWhile(conversation: ConversationKey, show: ShowTyping | undefined): AbortController {
    const done = new AbortController();
    if (!show) return done;
    void (async () => {
      while (!done.signal.aborted) {
        await show(conversation).catch(() => undefined);
        await this.timer.wait(TYPING_EVERY_MS, done.signal, { background: true });
      }
    })();
    return done;
  }
}
