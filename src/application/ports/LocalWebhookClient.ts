import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

/** A signed delivery to a route of this machine's webhook listener. */
export interface SignedDelivery {
  route: string;
  /** Sent as the event header. */
  event: string;
  payload: Record<string, unknown>;
  /** Signs the body (HMAC-SHA256, `X-Hub-Signature-256`), as a code host would. */
  secret: string;
}

/** What the listener answered. */
export interface ListenerResponse {
  status: number;
  body: string;
}

/** Nothing answers at the configured listener address: the gateway is not running there. */
export class ListenerUnreachableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ERROR_CODES.WEBHOOK.LISTENER_UNREACHABLE, message, options);
  }
}

/** Sends test deliveries to the listener configured on this machine (`agent webhook test`). */
export interface LocalWebhookClient {
  /** Where `route` is reached, for messages. */
  urlOf(route: string): string;
  /**
   * Posts the payload as JSON, signed with the secret, and returns whatever the listener
   * answered, any status. Throws ListenerUnreachableError when no listener answers.
   */
  send(delivery: SignedDelivery): Promise<ListenerResponse>;
}
