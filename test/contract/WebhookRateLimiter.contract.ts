import type { RateDecision, WebhookRateLimiter } from '../../src/application/ports/WebhookRateLimiter.js';

export interface WebhookRateLimiterSubject {
  limiter: WebhookRateLimiter;
  cleanup?: () => Promise<void>;
}

const T0 = Date.parse('2026-11-22T10:00:00.000Z');
/** The instant `seconds` after T0. */
const at = (seconds: number) => new Date(T0 + Math.round(seconds * 1000));
const allowed: RateDecision = { allowed: true };

/**
 * What every WebhookRateLimiter promises (src/application/ports/WebhookRateLimiter.ts). Each
 * test gets a fresh, empty store from `makeSubject`. Times are chosen so that a store counting
 * by whole seconds (refusing up to a second longer than an exact window) passes too.
 */
export function describeWebhookRateLimiterContract(name: string, makeSubject: () => Promise<WebhookRateLimiterSubject>): void {
  describe(`${name} (WebhookRateLimiter contract)`, () => {
    let subject: WebhookRateLimiterSubject;
    let limiter: WebhookRateLimiter;

    beforeEach(async () => {
      subject = await makeSubject();
      limiter = subject.limiter;
    });

    afterEach(async () => {
      await subject.cleanup?.();
    });

    it('allows `limit` requests of a route in a window, then refuses with a retry-after in whole seconds, at least 1', async () => {
      for (const seconds of [0, 10, 20]) expect(await limiter.take('ci', 3, at(seconds))).toEqual(allowed);

      const refused = await limiter.take('ci', 3, at(30));

      expect(refused.allowed).toBe(false);
      const retryAfter = (refused as { retryAfterSeconds: number }).retryAfterSeconds;
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(30);
      expect(retryAfter).toBeLessThanOrEqual(31);
    });

    it('says at least 1 second even when the oldest request leaves the window in a moment', async () => {
      expect(await limiter.take('ci', 1, at(0))).toEqual(allowed);
      const refused = await limiter.take('ci', 1, at(59.999));
      expect(refused).toEqual({ allowed: false, retryAfterSeconds: expect.any(Number) });
      expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    });

    it('gives a retry-after that is just enough: a second before it the request is still refused, once it passed it is allowed', async () => {
      expect(await limiter.take('ci', 2, at(0.4))).toEqual(allowed);
      expect(await limiter.take('ci', 2, at(15))).toEqual(allowed);

      const refused = await limiter.take('ci', 2, at(30.25));
      expect(refused.allowed).toBe(false);
      const retryAfter = (refused as { retryAfterSeconds: number }).retryAfterSeconds;

      expect((await limiter.take('ci', 2, at(30.25 + retryAfter - 1))).allowed).toBe(false);
      expect(await limiter.take('ci', 2, at(30.25 + retryAfter))).toEqual(allowed);
    });

    it('slides: each request leaves the window a minute after it, not at the turn of a minute', async () => {
      expect(await limiter.take('ci', 2, at(0))).toEqual(allowed);
      expect(await limiter.take('ci', 2, at(30))).toEqual(allowed);
      expect((await limiter.take('ci', 2, at(45))).allowed).toBe(false);

      expect(await limiter.take('ci', 2, at(61))).toEqual(allowed);
      expect((await limiter.take('ci', 2, at(62))).allowed).toBe(false);
      expect(await limiter.take('ci', 2, at(91))).toEqual(allowed);
      expect((await limiter.take('ci', 2, at(92))).allowed).toBe(false);
    });

    it('counts routes apart', async () => {
      expect(await limiter.take('a', 1, at(0))).toEqual(allowed);
      expect(await limiter.take('b', 1, at(0))).toEqual(allowed);
      expect((await limiter.take('a', 1, at(1))).allowed).toBe(false);
      expect((await limiter.take('b', 1, at(1))).allowed).toBe(false);
      expect(await limiter.take('c', 1, at(1))).toEqual(allowed);
    });

    it('does not count refused requests: a flood over the limit does not push the window on', async () => {
      expect(await limiter.take('ci', 2, at(0))).toEqual(allowed);
      expect(await limiter.take('ci', 2, at(1))).toEqual(allowed);
      for (let seconds = 5; seconds < 60; seconds += 1) expect((await limiter.take('ci', 2, at(seconds))).allowed).toBe(false);

      expect(await limiter.take('ci', 2, at(62))).toEqual(allowed);
      expect(await limiter.take('ci', 2, at(62))).toEqual(allowed);
      expect((await limiter.take('ci', 2, at(62))).allowed).toBe(false);
    });

    it('reads the limit at each take: a raised limit lets more through at once', async () => {
      expect(await limiter.take('ci', 1, at(0))).toEqual(allowed);
      expect((await limiter.take('ci', 1, at(1))).allowed).toBe(false);
      expect(await limiter.take('ci', 3, at(2))).toEqual(allowed);
      expect(await limiter.take('ci', 3, at(3))).toEqual(allowed);
      expect((await limiter.take('ci', 3, at(4))).allowed).toBe(false);
    });

    it('lets exactly `limit` of many simultaneous requests through', async () => {
      const decisions = await Promise.all(Array.from({ length: 30 }, () => limiter.take('ci', 10, at(0))));
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(10);
    });
  });
}
