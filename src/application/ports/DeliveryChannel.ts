import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import type { PlatformTarget } from '../../domain/DeliveryTarget.js';

/** A delivery that did not reach its target; `message` goes into `last_delivery_error`. */
export class DeliveryError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ERROR_CODES.DELIVERY.FAILED, message, options);
  }
}

/** Nothing was sent because a target cannot be delivered to on this host. */
export class DeliveryBlockedError extends AppError {
  constructor(message: string) {
    super(ERROR_CODES.DELIVERY.BLOCKED, message);
  }
}

/** What the platform confirmed for a whole delivery. */
export interface DeliveryReceipt {
  platform: string;
  /** The destination the parts went to, after the home channel or a channel name was resolved. */
  chatId: string;
  threadId: string | null;
  /** One message id per part, in order. */
  messageIds: string[];
}

/** Sends finished answers to chat platforms. */
export interface DeliveryChannel {
  /**
   * Credential preflight, contacting nobody: null when a delivery to `target` can be attempted,
   * else one sentence saying what is missing (the key and its environment variable) or why the
   * platform cannot address the destination.
   */
  problemWith(target: PlatformTarget): string | null;
  /**
   * Whether the channel `target` names by name (`slack:#ops`) can be found now, in config's
   * `channels` laid over the channel directory: null when it can, when the target names no
   * channel or a raw id, and when its platform is not configured (problemWith says so); else one
   * sentence naming the target (unknown, or matching several). Reads the directory, contacts nobody.
   */
  channelProblemWith(target: PlatformTarget): Promise<string | null>;
  /** The targets `all` stands for: every configured platform's home channel. */
  homeTargets(): PlatformTarget[];
  /**
   * Delivers `text` to `target`, resolving the destination now (a null destination is the home
   * channel, a `#name` goes through the channel directory), in as many parts as the platform
   * needs. Resolves once the platform confirmed every part; throws DeliveryError otherwise, saying
   * how many parts got through. A part already confirmed is never sent again.
   */
  deliver(target: PlatformTarget, text: string): Promise<DeliveryReceipt>;
}
