/**
 * An accepted webhook event, as persisted in the inbox before the 202 goes out:
 * everything the worker needs to run it later, even after a restart.
 */
export interface WebhookEvent {
  /** Unique per accepted event (not the sender's delivery id, which may repeat). */
  id: string;
  route: string;
  /** Event kind from the event header or the payload; `unknown` when neither says. */
  event: string;
  /** The sender's delivery id, or a millisecond timestamp when it sent none. */
  deliveryId: string;
  /** The parsed JSON payload (always an object). */
  payload: Record<string, unknown>;
  /** ISO 8601 UTC. */
  receivedAt: string;
  /**
   * Set by an inbox handing the event out: false when no run of it can have started before (it
   * was accepted by this very process and is handed out for the first time), true when one may
   * have (a restart, a takeover); absent when the inbox does not say. Never stored.
   */
  resumed?: boolean;
}
