import type { DirectoryChannel } from '../../domain/delivery/channelDirectory.js';
import type { SendFailureKind } from '../../domain/delivery/deliveryRetry.js';
import { ERROR_CODES, type DeliveryErrorCode } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

/** A destination on one platform, as its API addresses it. */
export interface ChatAddress {
  /** The chat, channel, room, address or number, as the target or the home channel gave it. */
  chatId: string;
  /** A thread or topic inside it, where the platform has them; null for none. */
  threadId: string | null;
}

/** What the platform confirmed for one part: the id it gave the message (a Slack `ts`, an SMTP id …). */
export interface SentPart {
  messageId: string;
}

const SEND_FAILURE_CODES: Record<SendFailureKind, DeliveryErrorCode> = {
  rate_limited: ERROR_CODES.DELIVERY.RATE_LIMITED,
  unavailable: ERROR_CODES.DELIVERY.UNAVAILABLE,
  refused: ERROR_CODES.DELIVERY.REFUSED,
};

/**
 * One attempt to send a part failed. `kind` decides what the delivery path does next (wait and
 * retry, or give up); `message` is one sentence that names the platform and never carries a
 * secret; `retryAfterMs` is the platform's own hint on a 429.
 */
export class PlatformSendError extends AppError {
  constructor(
    readonly kind: SendFailureKind,
    message: string,
    readonly retryAfterMs: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(SEND_FAILURE_CODES[kind], message, options);
  }
}

/**
 * One chat platform's official send API. It sends one part and does no splitting or retrying
 * of its own: the delivery path does that, the same way for every platform.
 */
export interface PlatformSender {
  readonly platform: string;
  /** The largest part the platform takes, in UTF-16 code units; null when it has no limit. */
  readonly partLimit: number | null;
  /**
   * Sends `text` to `to` once. Resolves only when the platform confirmed the message (a message
   * id, or its documented success field); throws PlatformSendError otherwise, a timeout
   * included. `idempotencyKey` is the same for every attempt at one part: platforms that
   * deduplicate by a client key (Matrix transaction ids) use it so a retry cannot post twice.
   */
  send(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart>;
  /**
   * The channels this platform's credentials can post to, for the channel directory; absent on
   * platforms that cannot list them. Throws PlatformSendError.
   */
  listChannels?(): Promise<DirectoryChannel[]>;
  /**
   * Who the credentials belong to, as the platform names the account (a bot's @username, a user
   * id), from the platform's own "who am I" call; it sends nothing. Absent on platforms without
   * such a call; null where the call does not exist for the settings in use (a DingTalk robot
   * webhook). Throws PlatformSendError: `refused` when the platform refuses the credentials.
   */
  whoAmI?(): Promise<string | null>;
}
