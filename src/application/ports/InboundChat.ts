import type { ConversationKey, InboundMessage } from '../../domain/chat/inboundMessage.js';

/**
 * Receives what people write to the bot on one chat platform (Telegram long polling, the Slack
 * Events API, the Discord Gateway). A source decides which messages are for the bot (private
 * chats, mentions, replies to it; never its own messages or other bots'), hands each one over
 * once in arrival order, and keeps its place across restarts where the platform lets it (Telegram's
 * update offset, Discord's session), so that a restart neither answers a message twice nor
 * drops one the platform still holds.
 */
export interface InboundChatSource {
  readonly platform: string;
  /**
   * Starts receiving; resolves once it is under way (it may keep reconnecting in the background,
   * logging each outage once). `deliver` is awaited before the source acknowledges the message
   * to the platform (moves its offset): a message is handed over at least once, and the caller
   * makes handing it over twice harmless (it remembers message ids). It rejects, with one
   * sentence, when it cannot start; whoever started it may start it again (or a new one) later.
   * `health` hears how receiving goes from then on; without it, the source logs its end itself.
   */
  start(deliver: (message: InboundMessage) => Promise<void>, health?: ReceiverHealth): Promise<void>;
  /** Stops receiving and closes connections; resolves when nothing more will be handed over. */
  stop(): Promise<void>;
  /**
   * Shows "typing…" in the conversation, where the platform has such a sign for bots; a no-op
   * where it has none. The caller repeats it while a turn runs (every ~4 s).
   */
  typing(conversation: ConversationKey): Promise<void>;
}

/**
 * What a started source tells about itself (SupervisedReceiver keeps the receiver's state from
 * it). A source logs its own outages, once each; these calls only say where it stands. Repeated
 * calls saying the same are harmless.
 */
export interface ReceiverHealth {
  /** Messages can be received (again). */
  up(): void;
  /** Receiving does not work now (`reason`, one sentence); the source keeps trying by itself. */
  down(reason: string): void;
  /** The source stopped for good (a credential refused while it ran): nothing more is received unless it is started again. */
  ended(reason: string): void;
}

/**
 * Where a source keeps its place with the platform between runs (Telegram's next update id,
 * Discord's session id and sequence), by platform. Values are small strings; the store writes
 * them durably before `set` resolves.
 */
export interface InboundCursorStore {
  get(platform: string): Promise<string | null>;
  set(platform: string, cursor: string): Promise<void>;
}

/**
 * The receiving role among the gateways sharing one chat store (docs/chat-platforms.md): the
 * gateway holding it runs the receivers that pull from a platform (Telegram's polling, Discord's
 * websocket) and answers every pending message, whichever gateway accepted it; the others only
 * accept what is pushed to them (Slack's events) and wait to take the role over. It is held for
 * as long as its holder lives, and freed the moment it dies, however it dies.
 */
export interface ChatReceiverLease {
  /**
   * Takes the role when it is free: true when this process holds it from now on. `onLost` is
   * called if it is lost later (the store's connection broke); it may then be taken again.
   */
  tryTake(onLost: () => void): Promise<boolean>;
  /** Gives the role up, for another gateway to take. */
  release(): Promise<void>;
}
