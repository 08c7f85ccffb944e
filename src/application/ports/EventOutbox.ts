import type { OutboundEvent } from '../../domain/events/outboundEvents.js';

/** One event waiting to go to one subscription. */
export interface OutboxEntry {
  subscription: string;
  event: OutboundEvent;
  /** When it was added: retries stop 24 hours after. */
  createdAt: Date;
  /** Attempts made so far. */
  attempts: number;
  /** Why the last attempt failed; null before the first. */
  lastError: string | null;
}

/** An event given up on: its last attempt's error, and when. */
export interface FailedEvent {
  subscription: string;
  event: OutboundEvent;
  createdAt: Date;
  failedAt: Date;
  attempts: number;
  error: string;
}

/**
 * The events out waiting to be sent (docs/events.md), durable on the store every process of a
 * home shares. Promises:
 * - `add` resolves once the entries are durable (synced; committed); an entry whose
 *   subscription and event id are already kept (waiting, or failed) is left as it is, so an
 *   event told twice is sent once, always with its one id;
 * - `claimDue` hands out entries whose next attempt is due at `now`, oldest first, at most
 *   `limit`, each claimed until `now + leaseMs`: no other claim, in this process or another
 *   sharing the store, gets it before that (it is handed out again after, if still waiting —
 *   so a claimant that died delays it, never loses it);
 * - `sent` removes an entry; `retryAt` records a failed attempt and when the next is due, and
 *   ends the claim; `giveUp` moves it to the failed list;
 * - `failed` lists the failed, newest first, at most `limit`; `failedCount` counts them. Reads only;
 * - `resend` puts a failed entry back to wait, due at `now`, with its attempts counted afresh and
 *   24 hours from `now`, its event (and id) as it was; false when no failed entry has that id.
 */
export interface EventOutbox {
  add(entries: readonly { subscription: string; event: OutboundEvent }[], now: Date): Promise<void>;
  claimDue(now: Date, limit: number, leaseMs: number): Promise<OutboxEntry[]>;
  sent(subscription: string, eventId: string): Promise<void>;
  retryAt(subscription: string, eventId: string, next: Date, error: string): Promise<void>;
  giveUp(subscription: string, eventId: string, error: string, at: Date): Promise<void>;
  failed(limit: number): Promise<FailedEvent[]>;
  failedCount(): Promise<number>;
  resend(subscription: string, eventId: string, now: Date): Promise<boolean>;
}
