import {
  AdaptiveConcurrency,
  backoffDelayMs,
  LIMIT_FORGOTTEN_AFTER_MS,
  MAX_BACKOFF_MS,
  RateLimitGate,
  releaseSpreadMs,
  releaseTime,
} from '../../../src/domain/agent/rateLimits.js';
import { seededRandom } from '../../support/seededRandom.js';

const lowest = () => 0;
const highest = () => 0.999_999;

describe('the back-off of a refused call', () => {
  it('doubles from 1 s with every refusal, ±50 %, and stops at 60 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((refusals) => backoffDelayMs(refusals, lowest))).toEqual([
      500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((refusals) => backoffDelayMs(refusals, highest))).toEqual([
      1_500, 3_000, 6_000, 12_000, 24_000, 48_000, 60_000, 60_000, 60_000,
    ]);
  });

  it('draws each delay within its bounds, and not all the same', () => {
    const random = seededRandom(7);
    for (let refusals = 1; refusals <= 10; refusals += 1) {
      const base = Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** (refusals - 1));
      const draws = Array.from({ length: 200 }, () => backoffDelayMs(refusals, random));
      expect(Math.min(...draws)).toBeGreaterThanOrEqual(base / 2);
      expect(Math.max(...draws)).toBeLessThanOrEqual(Math.min(MAX_BACKOFF_MS, base * 1.5));
      expect(new Set(draws).size).toBeGreaterThan(50);
    }
  });
});

describe('the shared Retry-After', () => {
  it('closes the gate until the latest time asked for, and says only the first closing', () => {
    const gate = new RateLimitGate();

    expect(gate.close(1_000, 7_000)).toBe(true);
    expect(gate.close(2_000, 3_000)).toBe(false);
    expect(gate.close(3_000, 9_000)).toBe(false);

    expect(gate.isClosed(11_999)).toBe(true);
    expect(gate.msUntilOpen(2_000)).toBe(10_000);
    expect(gate.isClosed(12_000)).toBe(false);
    expect(gate.close(20_000, 1_000)).toBe(true);
  });

  it('lets callers go at once while open, else at a random point of a spread after the opening', () => {
    const gate = new RateLimitGate();
    expect(gate.releaseAt(500, highest)).toBe(500);

    gate.close(0, 7_000);

    expect(gate.releaseAt(100, lowest)).toBe(7_000);
    expect(gate.releaseAt(100, highest)).toBe(7_000 + 3_499);
  });

  it('spreads over half the closure, at least 1 s and at most 30 s', () => {
    expect([0, 1_000, 7_000, 60_000, 3_600_000].map(releaseSpreadMs)).toEqual([1_000, 1_000, 3_500, 30_000, 30_000]);
    expect(releaseTime(10_000, 7_000, () => 0.5)).toBe(11_750);
  });
});

describe('the adaptive concurrency', () => {
  /** `count` calls sent, `started` of them with their response started. */
  function loaded(count: number, started: number, at = 0): AdaptiveConcurrency {
    const concurrency = new AdaptiveConcurrency();
    for (let index = 0; index < count; index += 1) concurrency.sent();
    for (let index = 0; index < started; index += 1) concurrency.responseStarted(at);
    return concurrency;
  }

  it('has no limit before a 429', () => {
    const concurrency = loaded(1_000, 900);

    expect(concurrency.limit(0)).toBeNull();
    expect(concurrency.hasRoom(0)).toBe(true);
  });

  it('drops to what the provider was serving at the 429, and never under 1', () => {
    const concurrency = loaded(150, 100);

    expect(concurrency.refused(0, 0)).toBe(100);
    concurrency.ended(false);
    expect(concurrency.hasRoom(0)).toBe(false);
    expect(loaded(3, 0).refused(0, 0)).toBe(1);
  });

  it('ignores the refusals of calls sent before the last drop: they were on their way already', () => {
    const concurrency = loaded(1_000, 100);
    expect(concurrency.refused(0, 0)).toBe(100);
    // Between two batches the provider serves few; the rest of the first burst is refused then.
    for (let index = 0; index < 90; index += 1) concurrency.ended(true);

    expect(concurrency.refused(0, 0)).toBe(100);
    const sentSince = concurrency.sent();
    expect(concurrency.refused(0, sentSince)).toBe(10);
  });

  it('never rises at a 429: a lower limit stays', () => {
    const concurrency = loaded(10, 10);
    concurrency.refused(0, 0);
    for (let index = 0; index < 5; index += 1) concurrency.ended(true);
    expect(concurrency.refused(0, concurrency.sent())).toBe(5);
    concurrency.ended(false);

    let generation = 0;
    for (let index = 0; index < 3; index += 1) {
      generation = concurrency.sent();
      concurrency.responseStarted(0);
    }

    expect(concurrency.serving).toBe(8);
    expect(concurrency.refused(0, generation)).toBe(5);
  });

  it('grows by one for every `limit` responses that start while it is reached', () => {
    const concurrency = loaded(4, 4);
    concurrency.refused(0, 0);
    const cycle = () => {
      concurrency.ended(true);
      concurrency.sent();
      return concurrency.responseStarted(0);
    };

    expect([cycle(), cycle(), cycle(), cycle()]).toEqual([false, false, false, true]);
    expect(concurrency.limit(0)).toBe(5);
    concurrency.sent();
    concurrency.responseStarted(0);
    // The fifth call counted toward the next raise already.
    expect(Array.from({ length: 5 }, cycle)).toEqual([false, false, false, true, false]);
    expect(concurrency.limit(0)).toBe(6);
  });

  it('does not grow while calls stay under it', () => {
    const concurrency = loaded(10, 10);
    concurrency.refused(0, 0);
    for (let index = 0; index < 10; index += 1) concurrency.ended(true);

    for (let index = 0; index < 100; index += 1) {
      concurrency.sent();
      concurrency.responseStarted(0);
      concurrency.ended(true);
    }

    expect(concurrency.limit(0)).toBe(10);
  });

  it('is lifted after 10 minutes without a 429', () => {
    const concurrency = loaded(10, 10);
    concurrency.refused(1_000, 0);

    expect(concurrency.limit(1_000 + LIMIT_FORGOTTEN_AFTER_MS - 1)).toBe(10);
    expect(concurrency.limit(1_000 + LIMIT_FORGOTTEN_AFTER_MS)).toBeNull();
  });
});
