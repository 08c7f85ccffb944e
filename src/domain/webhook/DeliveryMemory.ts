import { Fifo } from './Fifo.js';

/** How long an accepted delivery is remembered (docs/webhooks.md, Limits). */
export const DELIVERY_MEMORY_MS = 60 * 60 * 1000;

/**
 * A bound on remembered deliveries. Only authenticated, rate-limited senders add entries, so
 * this is reached only with many busy routes; the oldest entry then goes first.
 */
export const DELIVERY_MEMORY_ENTRIES = 10_000;

/** The idempotency key of a delivery: the route and the sender's delivery id, unambiguously joined. */
export function deliveryKey(route: string, deliveryId: string): string {
  return `${route.length}:${route}:${deliveryId}`;
}

/**
 * Keys seen in the last `ttlMs`, for dropping repeated deliveries. Times are passed in, in
 * milliseconds. At most `maxEntries` keys are held: expired keys are dropped as time passes, and
 * when the memory is full the oldest key is forgotten early. Each call costs the same however
 * many keys are held: the keys wait in a queue in the order they were remembered, and only its
 * front is ever looked at.
 */
export class DeliveryMemory {
  /** Key → when it was remembered. */
  private readonly seen = new Map<string, number>();
  /** Every remembering, oldest first; an entry whose time no longer matches `seen` is stale. */
  private readonly queue = new Fifo<{ key: string; at: number }>();

  constructor(
    private readonly ttlMs = DELIVERY_MEMORY_MS,
    private readonly maxEntries = DELIVERY_MEMORY_ENTRIES,
  ) {}

  /**
   * Remembers `key` at `nowMs` and returns true, or returns false (changing nothing) when it
   * is already remembered and has not expired.
   */
  remember(key: string, nowMs: number): boolean {
    while (this.queue.size > 0 && nowMs - this.queue.at(0)!.at >= this.ttlMs) this.dropOldest();
    const since = this.seen.get(key);
    if (since !== undefined && nowMs - since < this.ttlMs) return false;
    this.seen.set(key, nowMs);
    this.queue.push({ key, at: nowMs });
    while (this.seen.size > this.maxEntries) this.dropOldest();
    return true;
  }

  /** Forgets `key`, so a retry of that delivery is taken again (for when storing it failed). */
  forget(key: string): void {
    this.seen.delete(key);
  }

  /** The keys remembered and not expired at `nowMs`, oldest first, with when each was remembered. */
  recent(nowMs: number): Array<{ key: string; atMs: number }> {
    const recent: Array<{ key: string; atMs: number }> = [];
    for (const [key, atMs] of this.seen) if (nowMs - atMs < this.ttlMs) recent.push({ key, atMs });
    return recent.sort((a, b) => a.atMs - b.atMs);
  }

  get size(): number {
    return this.seen.size;
  }

  private dropOldest(): void {
    const { key, at } = this.queue.shift()!;
    if (this.seen.get(key) === at) this.seen.delete(key);
  }
}
