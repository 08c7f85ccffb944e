import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';

/**
 * Durable store of accepted webhook events. Promises:
 * - `accept` returns only once the event would survive a crash (written and synced), and
 *   stores a delivery the sender named (`deliveryKey`) once an hour at most, across restarts
 *   and takeovers too;
 * - an event is handed out by `claimNext` to one worker at a time, in acceptance order (among
 *   the routes it is asked for);
 * - `complete` removes it for good; an event claimed but never completed (crash, kill -9) is
 *   handed out again after a restart (`recover`), so none is lost and none is run twice while
 *   its process lives. The one window left is between a run's delivery and its `complete`: a
 *   crash exactly there runs the event again (at-least-once at that boundary).
 * - an event stored with `coalesce` (a route that coalesces, docs/webhooks.md) is never handed
 *   out alone: the events of one route and key form a group, handed out by `claimNext` as one
 *   event once the inbox's clock has passed the last one's `receivedAt` plus its window, with
 *   `coalesced` listing them all (groupRunEvent); its id is the group's first event's, and
 *   `complete` of that id completes them all. A group handed out is closed: events of its key
 *   accepted later form the next group, also when the group is handed out again after a
 *   restart. A store shared by replicas hands each group to one of them.
 */
export interface WebhookInbox {
  /**
   * Stores the event; false (storing nothing) when an event with the same `deliveryKey` was
   * stored within the last hour. `payloadJson`, when given, is the JSON text `event.payload`
   * was parsed from; a store may keep it as it is instead of encoding the payload again.
   */
  accept(event: WebhookEvent, payloadJson?: string, deliveryKey?: string): Promise<boolean>;
  /**
   * Takes over what processes that are gone left (their events, claimed ones included) and
   * returns how many of their started runs are waiting again. Call at start-up, and now and then
   * while running: a process may die at any time.
   */
  recover(): Promise<number>;
  /**
   * The oldest unclaimed event, now claimed by this process; null when none is waiting, or
   * when the end of its run could not be recorded (a full disk): no run starts then. With
   * `skipRoutes`, the oldest unclaimed event of a route not in it (events of those routes keep
   * their places).
   */
  claimNext(skipRoutes?: ReadonlySet<string>): Promise<WebhookEvent | null>;
  /**
   * Marks a claimed event done (its run finished, successfully or not). Idempotent. A store
   * shared by replicas leaves an event another replica took over meanwhile (and runs) as it is.
   */
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
