/*
 * What a provider's throttle decides once the provider answered 429, as pure functions of the
 * time and of random draws passed in: how long a refused call backs off, when the callers kept
 * out by a Retry-After go again, and how many calls may be in flight at once. Waiting is done by
 * the application (application/agent/ProviderThrottle.ts); operators read the rules in
 * docs/providers.md, "When the model is rate-limited".
 */

/** A draw in [0, 1): Math.random in service, a seeded generator in tests. */
export type RandomSource = () => number;

/** The first back-off of a call refused without another key to try; it doubles with every refusal. */
export const FIRST_BACKOFF_MS = 1_000;
/** The longest back-off, jitter included. */
export const MAX_BACKOFF_MS = 60_000;
/** The most a model call waits on its provider's throttle in all, before the provider counts as failed. */
export const MAX_RATE_LIMIT_WAIT_MS = 600_000;
/** Calls kept out by a closed gate go again spread over half its closure, within these bounds. */
export const MIN_RELEASE_SPREAD_MS = 1_000;
export const MAX_RELEASE_SPREAD_MS = 30_000;
/** A concurrency limit is lifted after this long without a 429: one old refusal does not cap a process for good. */
export const LIMIT_FORGOTTEN_AFTER_MS = 600_000;

/**
 * The back-off before the `refusals`-th repeat of a refused call: 1 s doubling (1, 2, 4 … s),
 * each time ±50 % at random ([0.5, 1.5) of it), and never above 60 s.
 */
export function backoffDelayMs(refusals: number, random: RandomSource): number {
  const doublings = Math.min(Math.max(0, refusals - 1), 16);
  const base = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** doublings);
  return Math.min(MAX_BACKOFF_MS, Math.round(base * (0.5 + random())));
}

/** Over how long the callers held by a closure of `closedForMs` are released: half of it, from 1 s to 30 s. */
export function releaseSpreadMs(closedForMs: number): number {
  return Math.min(MAX_RELEASE_SPREAD_MS, Math.max(MIN_RELEASE_SPREAD_MS, closedForMs / 2));
}

/** When one caller held until `opensAt` by a closure of `closedForMs` goes: a random point of the spread after it. */
export function releaseTime(opensAt: number, closedForMs: number, random: RandomSource): number {
  return opensAt + Math.floor(random() * releaseSpreadMs(closedForMs));
}

/**
 * A provider's shared Retry-After: closed until the latest time a 429 named, for every caller.
 * Times are milliseconds on one monotonic clock, passed in by the caller.
 */
export class RateLimitGate {
  private until = 0;
  private closedAt = 0;

  /** Closes the gate for `ms` from `now`; a later time already set is kept. True when the gate was open: a closing to report. */
  close(now: number, ms: number): boolean {
    const wasOpen = this.until <= now;
    if (wasOpen) this.closedAt = now;
    this.until = Math.max(this.until, now + Math.max(0, ms));
    return wasOpen && this.until > now;
  }

  isClosed(now: number): boolean {
    return this.until > now;
  }

  /** Milliseconds from `now` until the gate opens; 0 when it is open. */
  msUntilOpen(now: number): number {
    return Math.max(0, this.until - now);
  }

  /** When a caller arriving at `now` may go: now when open, else a random point of the spread after the opening. */
  releaseAt(now: number, random: RandomSource): number {
    return this.isClosed(now) ? releaseTime(this.until, this.until - this.closedAt, random) : now;
  }
}

/**
 * How many calls to a provider may be in flight (sent, not yet ended). None is limited until a
 * 429: then the limit drops to the calls the provider was serving at that moment (in flight with
 * their response started), at least 1, and grows by one for every `limit` responses that
 * start while the limit is reached (additive increase). Only a 429 to a call sent since the last
 * drop lowers it again: the refusals of calls sent before (a burst that was already on its way)
 * say nothing about the new limit, and would ratchet it down to whatever the provider happened
 * to be serving in between. After LIMIT_FORGOTTEN_AFTER_MS without a 429 the limit is lifted.
 */
export class AdaptiveConcurrency {
  private limitValue: number | null = null;
  private inFlightCount = 0;
  private servingCount = 0;
  private startsTowardRaise = 0;
  private lastRefusalAt = 0;
  /** How many times the limit dropped: the generation a call is sent in. */
  private drops = 0;

  /** The current limit; null when there is none. */
  limit(now: number): number | null {
    if (this.limitValue !== null && now - this.lastRefusalAt >= LIMIT_FORGOTTEN_AFTER_MS) this.limitValue = null;
    return this.limitValue;
  }

  get inFlight(): number {
    return this.inFlightCount;
  }

  get serving(): number {
    return this.servingCount;
  }

  /** Whether one more call may be sent at `now`. */
  hasRoom(now: number): boolean {
    const limit = this.limit(now);
    return limit === null || this.inFlightCount < limit;
  }

  /** A call was sent; returns the generation it was sent in, for `refused`. */
  sent(): number {
    this.inFlightCount += 1;
    return this.drops;
  }

  /** A call's response started (2xx). Returns true when this raised the limit. */
  responseStarted(now: number): boolean {
    this.servingCount += 1;
    const limit = this.limit(now);
    if (limit === null || this.inFlightCount < limit) return false;
    this.startsTowardRaise += 1;
    if (this.startsTowardRaise < limit) return false;
    this.startsTowardRaise = 0;
    this.limitValue = limit + 1;
    return true;
  }

  /** A call ended, however; `started` says whether its response had started. */
  ended(started: boolean): void {
    this.inFlightCount = Math.max(0, this.inFlightCount - 1);
    if (started) this.servingCount = Math.max(0, this.servingCount - 1);
  }

  /**
   * The provider answered 429 at `now` to a call sent in generation `sentIn`: the limit drops to
   * what it was serving, unless the call was sent before the last drop. Returns the limit.
   */
  refused(now: number, sentIn: number): number {
    this.lastRefusalAt = now;
    const current = this.limit(now);
    if (current !== null && sentIn < this.drops) return current;
    this.limitValue = Math.max(1, Math.min(current ?? Number.POSITIVE_INFINITY, this.servingCount));
    this.startsTowardRaise = 0;
    this.drops += 1;
    return this.limitValue;
  }
}
