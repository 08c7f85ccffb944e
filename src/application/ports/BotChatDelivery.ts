import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

/** One bot-chat delivery: which chat, which run, what to say. */
export interface BotChatRequest {
  /** `bot-chat:<profile>`; null is the job's own home. */
  profile: string | null;
  jobId: string;
  jobName: string;
  /** The run's durable execution id (its claim). */
  executionId: string;
  /** The full inbound turn (header, blank line, answer). */
  message: string;
}

/**
 * How a delivery ended: `queued` when a live owner of the target chat got it in its mailbox
 * (admission only; the owner runs the turn later), `delivered` when the command-line lane ran
 * the turn to its end.
 */
export interface BotChatReceipt {
  lane: 'queued' | 'delivered';
  receipt: string;
}

/** A bot-chat delivery that did not happen; the message is one sentence for last_delivery_error. */
export class BotChatDeliveryError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ERROR_CODES.DELIVERY.BOT_CHAT, message, options);
  }
}

/**
 * Delivers a job's answer as an inbound turn of a local `agent chat` (docs/delivery.md): into the
 * mailbox of a live interactive owner, else through `agent chat --query-file` in the target
 * profile.
 */
export interface BotChatDelivery {
  /** Why `profile` cannot receive deliveries (it does not exist), or null when it can. Never throws. */
  problemWith(profile: string | null): Promise<string | null>;
  /**
   * Delivers once per receipt: a receipt that already exists in the target's mailbox is never
   * delivered again (by either lane) and is refused. Throws BotChatDeliveryError on failure.
   */
  deliver(request: BotChatRequest): Promise<BotChatReceipt>;
}

/** A mailbox record an owner has claimed and must settle. */
export interface ClaimedBotChatMessage {
  receipt: string;
  jobName: string;
  message: string;
}

/**
 * The receiving side, used by an interactive `agent chat`: it registers as the owner of its
 * home's mailbox, claims what was queued, and settles each turn it ran.
 */
export interface BotChatOwner {
  /** Registers this process as the live owner; false when another live owner holds the mailbox. */
  register(): Promise<boolean>;
  /** Renews the lease (every 10 s while the chat is open). */
  renew(): Promise<void>;
  /** Gives the mailbox up; idempotent. */
  release(): Promise<void>;
  /**
   * Claims every `queued` record, oldest first. Records that are not JSON are reported through
   * `onUnreadable` (once each) and left alone.
   */
  claimQueued(onUnreadable: (file: string) => void): Promise<ClaimedBotChatMessage[]>;
  /** Marks a claimed record `settled` (error null) or `failed`. */
  settle(receipt: string, error: string | null): Promise<void>;
}
