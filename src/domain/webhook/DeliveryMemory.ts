/** How long an accepted delivery is remembered (decisions §7). */
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
 * when the memory is full the oldest key is forgotten early.
 */
export class DeliveryMemory {
  /** Key → when it was remembered; Map order is insertion order, so the oldest come first. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly ttlMs = DELIVERY_MEMORY_MS,
    private readonly maxEntries = DELIVERY_MEMORY_ENTRIES,
  ) {}

  /**
   * Remembers `key` at `nowMs` and returns true, or returns false (changing nothing) when it
   * is already remembered and has not expired.
   */
  remember(key: string, nowMs: number): boolean {
    this.expire(nowMs);
    const since = this.seen.get(key);
    if (since !== undefined && nowMs - since < this.ttlMs) return false;
    this.seen.delete(key);
    this.seen.set(key, nowMs);
    while (this.seen.size > this.maxEntries) this.seen.delete(this.seen.keys().next().value!);
    return true;
  }

  /** Forgets `key`, so a retry of that delivery is taken again (for when storing it failed). */
  forget(key: string): void {
    this.seen.delete(key);
  }

  get size(): number {
    return this.seen.size;
  }

  private expire(nowMs: number): void {
    for (const [key, since] of this.seen) {
      if (nowMs - since < this.ttlMs) return;
      this.seen.delete(key);
    }
  }
}
