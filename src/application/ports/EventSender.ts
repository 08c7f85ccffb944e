import type { OutboundEvent } from '../../domain/events/outboundEvents.js';

/** How one attempt went: the receiver's HTTP status, or null with why when it gave none. */
export interface EventSendResult {
  status: number | null;
  error: string | null;
}

/**
 * POSTs one event to a subscription's URL, signed as Standard Webhooks (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`) with `key`, timed out after a while. Never throws:
 * a refused connection or a timeout is a result with status null.
 */
export interface EventSender {
  send(url: string, key: Uint8Array, event: OutboundEvent, now: Date): Promise<EventSendResult>;
}
