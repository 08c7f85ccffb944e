import { Fifo } from './Fifo.js';

/** A rate-limit answer: go ahead, or wait this many whole seconds before the next try can pass. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * At most `limit` requests per key in any window of `windowMs` (a sliding log, not fixed
 * minutes): a request is counted only when it is allowed. Times are passed in, in milliseconds.
 * Memory: at most `limit` timestamps per key, and keys whose window has emptied are dropped.
 * Each call costs the same however many timestamps a key holds.
 */
export class SlidingWindowRateLimit {
  /** Per key, the times of the requests counted, oldest first. */
  private readonly hits = new Map<string, Fifo<number>>();
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly windowMs = 60_000) {}

  /** Counts one request of `key` at `nowMs` if fewer than `limit` were counted in the window. */
  take(key: string, limit: number, nowMs: number): RateDecision {
    this.sweep(nowMs);
    const hits = this.hits.get(key) ?? new Fifo<number>();
    while (hits.size > 0 && hits.at(0)! <= nowMs - this.windowMs) hits.shift();
    if (hits.size >= limit) {
      const oldest = hits.at(hits.size - limit) ?? nowMs;
      const waitMs = Math.max(oldest + this.windowMs - nowMs, 0);
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    hits.push(nowMs);
    this.hits.set(key, hits);
    return { allowed: true };
  }

  /** How many keys are held; for tests of the memory bound. */
  get size(): number {
    return this.hits.size;
  }

  /** Once per window, forgets keys (removed routes, quiet ones) with no request left in it. */
  private sweep(nowMs: number): void {
    if (nowMs - this.lastSweepMs < this.windowMs) return;
    this.lastSweepMs = nowMs;
    for (const [key, hits] of this.hits) {
      if ((hits.last() ?? Number.NEGATIVE_INFINITY) <= nowMs - this.windowMs) this.hits.delete(key);
    }
  }
}
