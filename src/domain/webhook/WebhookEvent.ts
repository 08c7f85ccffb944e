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
   * The W3C traceparent of the request that accepted the event, when traces are exported
   * (docs/traces.md): the run, later, links its trace to it. Stored with the event.
   */
  traceparent?: string;
  /**
   * Set by an inbox handing the event out: false when no run of it can have started before (it
   * was accepted by this very process and is handed out for the first time), true when one may
   * have (a restart, a takeover); absent when the inbox does not say. Never stored.
   */
  resumed?: boolean;
  /**
   * Stored with an event of a route that coalesces (docs/webhooks.md, Coalescing): the route's
   * key template rendered against this payload, and the window. Such an event is never handed
   * out alone: its group is, once the window after its last event has passed.
   */
  coalesce?: { key: string; windowMs: number };
  /**
   * Set by an inbox handing out a group of coalesced events as one run: every event of the group,
   * oldest first (the newest 20 with their payloads). The run's own `id` is then the group's (its
   * first event's), its other fields those of the last event. Never stored.
   */
  coalesced?: CoalescedDelivery[];
}

/** One event of a coalesced group, as its run sees it. */
export interface CoalescedDelivery {
  id: string;
  event: string;
  deliveryId: string;
  receivedAt: string;
  /** Absent for the older events of a group over 20. */
  payload?: Record<string, unknown>;
  /** The traceparent of the request that accepted it, as stored with it. */
  traceparent?: string;
}
