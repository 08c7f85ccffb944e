import {
  AdaptiveConcurrency,
  backoffDelayMs,
  MAX_RATE_LIMIT_WAIT_MS,
  RateLimitGate,
  releaseSpreadMs,
  releaseTime,
  type RandomSource,
} from '../../domain/agent/rateLimits.js';
import type { Logger } from '../ports/Logger.js';
import type { Timer } from '../ports/Timer.js';
import { ModelCallError } from './ports/ChatModel.js';

/** A call's place among the calls in flight to the provider: `started` once its response began, `end` once it is over. */
export interface InFlight {
  /** Under which concurrency limit it was sent (AdaptiveConcurrency.sent). */
  readonly generation: number;
  started(): void;
  end(): void;
}

/** What the throttle needs of a credential pool: when a key is usable again, and how to say that none is. */
export interface KeyReadiness {
  msUntilAvailable(now: number): number;
  restingProblem(now: number): string;
}

/** One model call's stay at the throttle: how often it was refused, until when it backs off, how long it waited. */
export interface ThrottledCall {
  refusals: number;
  backoffUntil: number;
  waitedMs: number;
  /** The provider's words at the last refusal, for the message of a call that gives up. */
  lastRefusal: string | null;
}

export interface ProviderThrottleOptions {
  /** The provider as the log names it: its configured name. */
  name: string;
  timer: Timer;
  /** The jitter's draws; default Math.random. */
  random?: RandomSource;
  logger?: Logger | null;
  /** The most one call waits in all; default MAX_RATE_LIMIT_WAIT_MS (10 minutes). */
  maxWaitMs?: number;
}

/**
 * What every session calling one provider shares once it answers 429 (docs/providers.md, "When
 * the model is rate-limited"); one lives per provider name and endpoint for the whole process.
 *
 * - A Retry-After closes the provider's gate: no call is sent until it opens, and the calls it
 *   held go again at random points of a spread after it (releaseSpreadMs), not all at once.
 * - A refused call backs off on its own too (backoffDelayMs), never going before the gate.
 * - After a 429 only as many calls are in flight as the provider was serving, then one more for
 *   every `limit` responses started; calls beyond it queue for a place, first come first served.
 * - A call that would wait more than `maxWaitMs` in all gives up with a sentence saying why.
 *
 * Decisions are domain/agent/rateLimits.ts's; this class only waits, on the injected Timer, and
 * every wait ends at once when the run's signal aborts.
 */
export class ProviderThrottle {
  private readonly gate = new RateLimitGate();
  private readonly concurrency = new AdaptiveConcurrency();
  private readonly queue: Array<(place: InFlight) => void> = [];
  private readonly random: RandomSource;
  private readonly maxWaitMs: number;

  constructor(private readonly options: ProviderThrottleOptions) {
    this.random = options.random ?? Math.random;
    this.maxWaitMs = options.maxWaitMs ?? MAX_RATE_LIMIT_WAIT_MS;
  }

  /** A fresh call, not yet refused. */
  newCall(): ThrottledCall {
    return { refusals: 0, backoffUntil: 0, waitedMs: 0, lastRefusal: null };
  }

  /** Calls in flight, and the limit (null: none); for tests and logs. */
  get load(): { inFlight: number; limit: number | null } {
    return { inFlight: this.concurrency.inFlight, limit: this.concurrency.limit(this.now()) };
  }

  /**
   * Waits until `call` may be sent: the gate open, its back-off over, a key usable (`keys`), and
   * a place in flight. Resolves with that place, or with the problem of a call that would wait
   * too long. Throws ModelCallError `aborted` as soon as `signal` aborts.
   */
  async admit(call: ThrottledCall, signal: AbortSignal, keys: KeyReadiness | null): Promise<InFlight | { problem: string }> {
    for (;;) {
      throwIfAborted(signal);
      const now = this.now();
      const keyMs = keys?.msUntilAvailable(now) ?? 0;
      const keysAt = keyMs > 0 ? releaseTime(now + keyMs, keyMs, this.random) : now;
      const wakeAt = Math.max(this.gate.releaseAt(now, this.random), call.backoffUntil, keysAt);
      if (wakeAt > now) {
        if (call.waitedMs + (wakeAt - now) > this.maxWaitMs) return { problem: this.tooLong(call, now, keys) };
        await this.timer.wait(wakeAt - now, signal);
        call.waitedMs += this.now() - now;
        continue;
      }
      const place = await this.place(call, signal);
      if (signal.aborted) place?.end();
      throwIfAborted(signal);
      if (!place) return { problem: this.tooLong(call, this.now(), keys) };
      // While it queued, the gate may have closed again or the keys come to rest.
      const later = this.now();
      if (!this.gate.isClosed(later) && (keys?.msUntilAvailable(later) ?? 0) === 0) return place;
      place.end();
    }
  }

  /**
   * The provider answered `call` with a 429 that no other key can take: the call backs off, a
   * Retry-After closes the gate for every caller, and the concurrency limit drops. Logged once
   * per closing of the gate and when a limit first applies, not once per call.
   */
  refused(call: ThrottledCall, place: InFlight, retryAfterMs: number | null, problem: string): void {
    const now = this.now();
    call.refusals += 1;
    call.lastRefusal = problem;
    call.backoffUntil = now + backoffDelayMs(call.refusals, this.random);
    const hadLimit = this.concurrency.limit(now) !== null;
    const limit = this.concurrency.refused(now, place.generation);
    if (retryAfterMs !== null && retryAfterMs > 0 && this.gate.close(now, retryAfterMs)) {
      const wait = seconds(retryAfterMs);
      this.options.logger?.warn(
        `${this.options.name} is rate-limiting (HTTP 429): every call to it waits ${wait} s as its Retry-After asks, ` +
          `then they go again spread over ${Number((releaseSpreadMs(retryAfterMs) / 1000).toFixed(1))} s`,
        { provider: this.options.name, waitSeconds: wait },
      );
    }
    if (!hadLimit) {
      this.options.logger?.warn(
        `${this.options.name} is rate-limiting (HTTP 429): at most ${limit} calls to it are in flight from now on, ` +
          'one more as calls succeed',
        { provider: this.options.name, limit },
      );
    }
  }

  private get timer(): Timer {
    return this.options.timer;
  }

  private now(): number {
    return this.options.timer.monotonicNow();
  }

  /** A place in flight at once when there is room and nobody queues, else the first that frees up; null when the call waited too long. */
  private place(call: ThrottledCall, signal: AbortSignal): Promise<InFlight | null> {
    if (this.queue.length === 0 && this.concurrency.hasRoom(this.now())) return Promise.resolve(this.take());
    const queuedAt = this.now();
    return new Promise((resolve) => {
      const stopWaiting = new AbortController();
      const onAbort = () => stopWaiting.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      const grant = (place: InFlight) => {
        signal.removeEventListener('abort', onAbort);
        stopWaiting.abort();
        call.waitedMs += this.now() - queuedAt;
        resolve(place);
      };
      this.queue.push(grant);
      void this.timer.wait(Math.max(1, this.maxWaitMs - call.waitedMs), stopWaiting.signal).then(() => {
        const index = this.queue.indexOf(grant);
        if (index < 0) return;
        this.queue.splice(index, 1);
        signal.removeEventListener('abort', onAbort);
        call.waitedMs += this.now() - queuedAt;
        resolve(null);
      });
    });
  }

  private take(): InFlight {
    const generation = this.concurrency.sent();
    let started = false;
    let ended = false;
    return {
      generation,
      started: () => {
        if (started || ended) return;
        started = true;
        if (this.concurrency.responseStarted(this.now())) this.pump();
      },
      end: () => {
        if (ended) return;
        ended = true;
        this.concurrency.ended(started);
        this.pump();
      },
    };
  }

  /** Hands the places that are free to the calls queued longest. */
  private pump(): void {
    while (this.queue.length > 0 && this.concurrency.hasRoom(this.now())) this.queue.shift()!(this.take());
  }

  private tooLong(call: ThrottledCall, now: number, keys: KeyReadiness | null): string {
    const limit = `a call waits at most ${seconds(this.maxWaitMs)} s for a rate-limited provider`;
    const waited = call.waitedMs > 0 ? ` and this one had waited ${seconds(call.waitedMs)} s` : '';
    const remaining = this.maxWaitMs - call.waitedMs;
    let what: string;
    if (keys && keys.msUntilAvailable(now) > remaining) what = keys.restingProblem(now);
    else if (this.gate.msUntilOpen(now) > remaining) {
      what = `rate-limited: ${this.options.name} asks every call to wait ${seconds(this.gate.msUntilOpen(now))} s (Retry-After)`;
    } else what = `rate-limited: ${call.lastRefusal ?? `${this.options.name} had no room for the call`}`;
    return `${what}; ${limit}${waited}`;
  }
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new ModelCallError('aborted', 'the run was stopped');
}

function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}
