import { inject, injectable } from 'inversify';
import { conversationLabel, type InboundMessage } from '../../domain/chat/inboundMessage.js';
import { ownEntry } from '../../domain/ownEntry.js';
import { errorText } from '../../domain/errors.js';
import type { ChatSettings } from '../ports/ChatSettings.js';
import type { Clock } from '../ports/Clock.js';
import type { ConversationStore } from '../ports/ConversationStore.js';
import type { Logger } from '../ports/Logger.js';
import type { Timer } from '../ports/Timer.js';
import { TOKENS } from '../ports/tokens.js';
import { ChatTurns } from './ChatTurns.js';
import { showTypingWhile, type ShowTyping } from './chatTyping.js';

/** A person who may not talk to the bot is logged once in this long. */
const REFUSAL_LOGGED_EVERY_MS = 3_600_000;
/**
 * How often the answering gateway looks for pending messages it does not know of: those another
 * gateway sharing the store accepted (Slack's events reach any of them).
 */
export const PENDING_LOOKED_AT_EVERY_MS = 2_000;
/** Messages answered here lately, so that a look at the pending ones that began before their end does not take them again. */
const ANSWERED_HERE_KEPT = 1_000;

export { TYPING_EVERY_MS, type ShowTyping } from './chatTyping.js';

/**
 * Chats reaching the agent (docs/chat-platforms.md). Each message a receiver hands over is judged
 * (only `allowed_users` may talk to the bot; anyone else costs nothing and is logged once an
 * hour), kept until answered (so a restart still answers it, and one handed over twice is
 * answered once), and becomes one agent turn in its conversation: with the conversation's
 * recent exchanges, memory, the platform's toolsets, and the conversation as the origin of any
 * job the turn makes. One turn at a time per conversation, in arrival order; conversations in
 * parallel up to `maxConcurrentTurns`, the longest-waiting first. The answer goes back to the same
 * chat and thread through the delivery channel (splitting, retries); a turn that fails answers
 * with one sentence saying so.
 *
 * Several gateways may share one store: every one keeps what is handed to it, and only the one
 * answering (the holder of the receiving role) takes turns, for the messages it receives and
 * for every pending one, whichever gateway kept it: at `start`, then every
 * PENDING_LOOKED_AT_EVERY_MS.
 */
@injectable()
export class ConverseInChats {
  /** Messages waiting, by conversation, oldest first. */
  private readonly waiting = new Map<string, InboundMessage[]>();
  /** Conversations with a message waiting and no turn running, in the order they became so. */
  private readonly ready: string[] = [];
  private readonly running = new Map<string, Promise<void>>();
  private readonly refusalLogged = new Map<string, number>();
  private typing: ReadonlyMap<string, ShowTyping> = new Map();
  private stopping = false;
  /** Whether this process answers (holds the receiving role); otherwise it only keeps messages. */
  private answering = false;
  /** Stops the looks at pending messages. */
  private looking: AbortController | null = null;
  /** Messages waiting or in a turn here (`<conversation>\n<message id>`). */
  private readonly known = new Set<string>();
  /** Messages answered here lately, the newest ANSWERED_HERE_KEPT. */
  private readonly answeredHere = new Set<string>();

  constructor(
    @inject(ChatTurns) private readonly turns: ChatTurns,
    @inject(TOKENS.ConversationStore) private readonly store: ConversationStore,
    @inject(TOKENS.ChatSettings) private readonly settings: ChatSettings,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Timer) private readonly timer: Timer,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /**
   * Starts taking turns (this process now holds the receiving role): first for the pending
   * messages (accepted before a restart, or by another gateway), then for those handed over, and
   * every PENDING_LOOKED_AT_EVERY_MS for pending ones it did not know of.
   */
  async start(typing: ReadonlyMap<string, ShowTyping>): Promise<void> {
    this.typing = typing;
    this.answering = true;
    const owed = await this.takePending();
    if (owed > 0) this.log.info(`answering ${owed} chat message(s) accepted before a restart or by another gateway`);
    const looking = new AbortController();
    this.looking = looking;
    void (async () => {
      while (!looking.signal.aborted) {
        await this.timer.wait(PENDING_LOOKED_AT_EVERY_MS, looking.signal, { background: true });
        if (looking.signal.aborted) break;
        await this.takePending().catch((error: unknown) =>
          this.log.warn('pending chat messages could not be read', { error: errorText(error) }),
        );
      }
    })();
  }

  /**
   * Takes no new turn (the receiving role was lost): messages keep being kept, turns running go
   * on, and what waits here stays pending for whoever answers next.
   */
  pause(): void {
    this.answering = false;
    this.looking?.abort();
    this.looking = null;
    for (const queue of this.waiting.values()) for (const message of queue) this.known.delete(keyOf(message));
    this.waiting.clear();
    this.ready.length = 0;
  }

  /**
   * What a receiver hands each message to. Resolves once the message is kept (or judged not to
   * be answered), not when it is answered: the receiver may then acknowledge it.
   */
  async receive(message: InboundMessage): Promise<void> {
    if (this.stopping) throw new Error('the gateway is stopping; the message is left with the platform');
    const access = ownEntry(this.settings.platforms, message.conversation.platform);
    if (!access) return;
    if (access.allowedUsers !== null && !access.allowedUsers.has(message.userId)) {
      this.logRefusal(message);
      return;
    }
    if (!(await this.store.accept(message))) return;
    if (this.answering) this.enqueue(message);
  }

  /** Takes no new turn, and waits up to `graceMs` for those running; true when all ended. */
  async stop(graceMs: number): Promise<boolean> {
    this.stopping = true;
    this.looking?.abort();
    const all = Promise.all(this.running.values()).then(() => true);
    const cancel = new AbortController();
    const late = this.timer.wait(graceMs, cancel.signal).then(() => false);
    const finished = await Promise.race([all, late]);
    cancel.abort();
    return finished;
  }

  /** Enqueues the pending messages not known here; how many it took. */
  private async takePending(): Promise<number> {
    const pending = await this.store.pending();
    let taken = 0;
    for (const message of pending) {
      if (!this.answering || this.stopping || this.answeredHere.has(keyOf(message))) continue;
      if (this.enqueue(message)) taken += 1;
    }
    return taken;
  }

  /** Queues `message` for its conversation's turn; false when it is known here already. */
  private enqueue(message: InboundMessage): boolean {
    const key = keyOf(message);
    if (this.known.has(key)) return false;
    this.known.add(key);
    const label = conversationLabel(message.conversation);
    const queue = this.waiting.get(label) ?? [];
    queue.push(message);
    this.waiting.set(label, queue);
    if (queue.length === 1 && !this.running.has(label)) this.ready.push(label);
    this.takeTurns();
    return true;
  }

  private takeTurns(): void {
    while (!this.stopping && this.running.size < this.settings.maxConcurrentTurns && this.ready.length > 0) {
      const label = this.ready.shift()!;
      const message = this.waiting.get(label)!.shift()!;
      const typing = showTypingWhile(message.conversation, this.typing.get(message.conversation.platform), this.timer);
      const turn = this.turns.take(message, typing).finally(() => {
        this.running.delete(label);
        this.answered(message);
        const rest = this.waiting.get(label) ?? [];
        if (rest.length > 0) this.ready.push(label);
        else this.waiting.delete(label);
        this.takeTurns();
      });
      this.running.set(label, turn);
    }
  }

  /** Forgets a message's turn, remembering for a while that it was answered here. */
  private answered(message: InboundMessage): void {
    const key = keyOf(message);
    this.known.delete(key);
    this.answeredHere.add(key);
    if (this.answeredHere.size > ANSWERED_HERE_KEPT) this.answeredHere.delete(this.answeredHere.values().next().value!);
  }

  private logRefusal(message: InboundMessage): void {
    const key = `${message.conversation.platform}:${message.userId}`;
    const now = this.clock.now().getTime();
    const last = this.refusalLogged.get(key);
    if (last !== undefined && now - last < REFUSAL_LOGGED_EVERY_MS) return;
    this.refusalLogged.set(key, now);
    const who = message.userName ? `${message.userId} (${message.userName})` : message.userId;
    this.log.warn(
      `a message from ${message.conversation.platform} user ${who} was ignored: not in platforms.${message.conversation.platform}.allowed_users`,
    );
  }
}

/** A message's key among the pending ones: its conversation and its id there. */
function keyOf(message: InboundMessage): string {
  return `${conversationLabel(message.conversation)}\n${message.messageId}`;
}
