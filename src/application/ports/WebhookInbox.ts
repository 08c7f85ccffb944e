import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';

/**
 * Durable store of accepted webhook events. Promises:
 * - `accept` returns only once the event would survive a crash (written and synced);
 * - an event is handed out by `claimNext` to one worker at a time, in acceptance order;
 * - `complete` removes it for good; an event claimed but never completed (crash, kill -9) is
 *   handed out again after a restart (`recover`), so none is lost and none is run twice while
 *   its process lives. The one window left is between a run's delivery and its `complete`: a
 *   crash exactly there runs the event again (at-least-once at that boundary).
 */
export interface WebhookInbox {
  /**
   * `payloadJson`, when given, is the JSON text `event.payload` was parsed from; a store may
   * keep it as it is instead of encoding the payload again.
   */
  accept(event: WebhookEvent, payloadJson?: string): Promise<void>;
  /** Returns claims of a process that is gone to the queue; returns how many. Call at start-up. */
  recover(): Promise<number>;
  /** The oldest unclaimed event, now claimed by this process; null when none is waiting. */
  claimNext(): Promise<WebhookEvent | null>;
  /** Marks a claimed event done (its run finished, successfully or not). Idempotent. */
  complete(eventId: string): Promise<void>;
  /** Events accepted and not yet completed (claimed or not). */
  pending(): Promise<number>;
  /**
   * Waits for the writes under way and lets go of what the inbox holds open. Call it once
   * nothing uses the inbox any more (the gateway's stop); a later call of another method starts
   * it afresh from what is stored.
   */
  close(): Promise<void>;
}
