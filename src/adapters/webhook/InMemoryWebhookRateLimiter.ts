import { injectable } from 'inversify';
import type { RateDecision, WebhookRateLimiter } from '../../application/ports/WebhookRateLimiter.js';
import { SlidingWindowRateLimit } from '../../domain/webhook/SlidingWindowRateLimit.js';

/**
 * The rate limit held in this process's memory: exact to the millisecond, never fails, and
 * starts afresh with the process. Enough for the file store, where one gateway serves a home;
 * replicas sharing a database need the database's limiter. Bind it as a singleton: it holds
 * the windows.
 */
@injectable()
export class InMemoryWebhookRateLimiter implements WebhookRateLimiter {
  private readonly window = new SlidingWindowRateLimit();

  async take(route: string, limit: number, now: Date): Promise<RateDecision> {
    return this.window.take(route, limit, now.getTime());
  }
}
