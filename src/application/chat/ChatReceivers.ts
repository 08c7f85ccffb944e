import type { ChatReceiverStatus } from '../../domain/chat/chatReceivers.js';
import type { ConversationKey, InboundMessage } from '../../domain/chat/inboundMessage.js';
import type { Clock } from '../ports/Clock.js';
import type { InboundChatSource } from '../ports/InboundChat.js';
import type { Logger } from '../ports/Logger.js';
import type { Metrics } from '../ports/Metrics.js';
import type { Timer } from '../ports/Timer.js';
import type { ShowTyping } from './ConverseInChats.js';
import { SupervisedReceiver } from './SupervisedReceiver.js';

/** How one platform's receiver is had. */
export interface ReceiverRecipe {
  platform: string;
  /**
   * Pushed to (Slack's events reach the listener of any gateway): run by every gateway. Otherwise
   * it pulls from its platform, and only the gateway holding the receiving role runs it.
   */
  pushed: boolean;
  /** The source to start: a new one each time, or the same one where it can start again. */
  make: () => Promise<InboundChatSource>;
}

export interface ChatReceiversOptions {
  recipes: readonly ReceiverRecipe[];
  deliver: (message: InboundMessage) => Promise<void>;
  timer: Timer;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** In [0, 1); default Math.random. */
  random?: () => number;
}

/**
 * A gateway's chat receivers, one SupervisedReceiver per platform: each starts, fails and comes
 * back on its own, so one platform out of reach never keeps the others from receiving. Their
 * states are what `agent status` and `/metrics` show.
 */
export class ChatReceivers {
  private readonly pushed: SupervisedReceiver[];
  private readonly pulling: SupervisedReceiver[];
  private readonly listeners: Array<(statuses: ChatReceiverStatus[]) => void> = [];

  constructor(options: ChatReceiversOptions) {
    const context = {
      deliver: options.deliver,
      timer: options.timer,
      clock: options.clock,
      logger: options.logger,
      metrics: options.metrics,
      random: options.random ?? Math.random,
      changed: () => this.tell(),
    };
    const supervised = (recipe: ReceiverRecipe) =>
      new SupervisedReceiver(recipe.platform, recipe.make, context, recipe.pushed ? 'starting' : 'standby');
    this.pushed = options.recipes.filter((recipe) => recipe.pushed).map(supervised);
    this.pulling = options.recipes.filter((recipe) => !recipe.pushed).map(supervised);
  }

  /** Each receiver's state, in the order of the recipes' kinds: pushed ones first. */
  statuses(): ChatReceiverStatus[] {
    return [...this.pushed, ...this.pulling].map((receiver) => receiver.status());
  }

  /** Calls `listener` with every state each time one changes. */
  onChange(listener: (statuses: ChatReceiverStatus[]) => void): void {
    this.listeners.push(listener);
  }

  /** "typing…" per platform, through whichever source of it runs at the time. */
  typing(): Map<string, ShowTyping> {
    return new Map(
      [...this.pushed, ...this.pulling].map((receiver) => [
        receiver.platform,
        (conversation: ConversationKey) => receiver.typing(conversation),
      ]),
    );
  }

  /** Starts the pushed receivers; resolves once each has tried once. Never rejects. */
  startPushed(): Promise<void> {
    return Promise.all(this.pushed.map((receiver) => receiver.start())).then(() => undefined);
  }

  /** Starts the pulling receivers (this gateway took the receiving role); resolves once each has tried once. Never rejects. */
  startPulling(): Promise<void> {
    return Promise.all(this.pulling.map((receiver) => receiver.start())).then(() => undefined);
  }

  /** Stops the pulling receivers, which stand by from now on (the role went, or could not be used). */
  async stopPulling(): Promise<void> {
    await Promise.all(this.pulling.map((receiver) => receiver.stop('standby')));
  }

  /** Stops every receiver and every try to come. */
  async stop(): Promise<void> {
    await Promise.all([...this.pushed, ...this.pulling].map((receiver) => receiver.stop()));
  }

  private tell(): void {
    const statuses = this.statuses();
    for (const listener of this.listeners) listener(statuses);
  }
}
