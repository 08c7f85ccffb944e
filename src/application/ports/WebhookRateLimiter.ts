import type { RateDecision } from '../../domain/webhook/SlidingWindowRateLimit.js';

export type { RateDecision };

/**
 * The per-route rate limit of the webhook listener (docs/webhooks.md): `extra.rate_limit`
 * requests in any sliding 60 s window. Promises:
 * - at most `limit` requests of one route are counted in any 60 s window, across every process
 *   sharing the limiter's store (one gateway's memory, or one database for every replica);
 * - only allowed requests are counted: a refused one does not push the window further;
 * - a refusal says how many whole seconds (at least 1) to wait: a request made that long
 *   after it passes, unless others were counted meanwhile. A store may count by whole
 *   seconds, and then refuses up to one second longer than an exact sliding window would,
 *   never shorter;
 * - routes are counted apart.
 * Times are the caller's (`now`), never the store's own clock. Throws when its store cannot be
 * used (a database that is away); the caller then answers that the sender should retry.
 */
export interface WebhookRateLimiter {
  /** Counts one request of `route` at `now` if fewer than `limit` (at least 1) were counted in the window before it. */
  take(route: string, limit: number, now: Date): Promise<RateDecision>;
}
