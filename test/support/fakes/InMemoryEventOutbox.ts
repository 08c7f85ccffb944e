import type { EventOutbox, FailedEvent, OutboxEntry } from '../../../src/application/ports/EventOutbox.js';
import type { OutboundEvent } from '../../../src/domain/events/outboundEvents.js';

interface Kept {
  entry: OutboxEntry;
  nextAt: number;
  claimedUntil: number;
  failedAt: Date | null;
}

/** The events out in memory, shared by every instance given the same map (another process on one store). */
export class InMemoryEventOutbox implements EventOutbox {
  constructor(private readonly kept: Map<string, Kept> = new Map()) {}

  /** Another instance on the same store. */
  another(): InMemoryEventOutbox {
    return new InMemoryEventOutbox(this.kept);
  }

  async add(entries: readonly { subscription: string; event: OutboundEvent }[], now: Date): Promise<void> {
    for (const { subscription, event } of entries) {
      const key = `${subscription}\n${event.id}`;
      if (this.kept.has(key)) continue;
      this.kept.set(key, {
        entry: { subscription, event, createdAt: now, attempts: 0, lastError: null },
        nextAt: now.getTime(),
        claimedUntil: 0,
        failedAt: null,
      });
    }
  }

  async claimDue(now: Date, limit: number, leaseMs: number): Promise<OutboxEntry[]> {
    const due = [...this.kept.values()]
      .filter((kept) => kept.failedAt === null && kept.nextAt <= now.getTime() && kept.claimedUntil <= now.getTime())
      .sort((a, b) => a.entry.createdAt.getTime() - b.entry.createdAt.getTime())
      .slice(0, limit);
    for (const kept of due) kept.claimedUntil = now.getTime() + leaseMs;
    return due.map((kept) => ({ ...kept.entry }));
  }

  async sent(subscription: string, eventId: string): Promise<void> {
    const key = `${subscription}\n${eventId}`;
    if (this.kept.get(key)?.failedAt === null) this.kept.delete(key);
  }

  async retryAt(subscription: string, eventId: string, next: Date, error: string): Promise<void> {
    const kept = this.kept.get(`${subscription}\n${eventId}`);
    if (!kept || kept.failedAt !== null) return;
    kept.entry = { ...kept.entry, attempts: kept.entry.attempts + 1, lastError: error };
    kept.nextAt = next.getTime();
    kept.claimedUntil = 0;
  }

  async giveUp(subscription: string, eventId: string, error: string, at: Date): Promise<void> {
    const kept = this.kept.get(`${subscription}\n${eventId}`);
    if (!kept || kept.failedAt !== null) return;
    kept.entry = { ...kept.entry, attempts: kept.entry.attempts + 1, lastError: error };
    kept.failedAt = at;
  }

  async failed(limit: number): Promise<FailedEvent[]> {
    return [...this.kept.values()]
      .filter((kept) => kept.failedAt !== null)
      .sort((a, b) => b.failedAt!.getTime() - a.failedAt!.getTime())
      .slice(0, limit)
      .map((kept) => ({
        subscription: kept.entry.subscription,
        event: kept.entry.event,
        createdAt: kept.entry.createdAt,
        failedAt: kept.failedAt!,
        attempts: kept.entry.attempts,
        error: kept.entry.lastError ?? 'unknown',
      }));
  }

  async resend(subscription: string, eventId: string, now: Date): Promise<boolean> {
    const kept = this.kept.get(`${subscription}\n${eventId}`);
    if (!kept || kept.failedAt === null) return false;
    kept.entry = { ...kept.entry, attempts: 0, createdAt: now };
    kept.nextAt = now.getTime();
    kept.claimedUntil = 0;
    kept.failedAt = null;
    return true;
  }

  async failedCount(): Promise<number> {
    return [...this.kept.values()].filter((kept) => kept.failedAt !== null).length;
  }
}
