import type { RateDecision, WebhookRateLimiter } from '../../application/ports/WebhookRateLimiter.js';
import type { PostgresDatabase, PreparedStatement } from './PostgresDatabase.js';

const TAKE: PreparedStatement = { name: 'agent_webhook_rate_take', text: 'SELECT agent_webhook_rate_take($1, $2, $3) AS retry_after' };

/**
 * The webhook rate limit kept in the database, so that it holds across every gateway sharing
 * it (docs/scaling.md): requests counted per route and whole second in `agent_webhook_rate`.
 * Each take is one statement, one round trip (the function agent_webhook_rate_take of the
 * migration 'webhook rate limit'); takes of one route wait for each other there, whatever
 * process sends them. Counting by whole seconds refuses up to one second longer than an exact
 * window, never shorter. Counts are committed without waiting for the disk: a crash of the
 * database server forgets at most the last moment's counts, letting that many more through once.
 * Times are the callers' `now`: the window is as exact as the gateways' clocks agree (NTP), and
 * clocks more than a minute apart forget counts the other still uses. Throws
 * DatabaseUnavailableError when the database cannot be used.
 */
export class PostgresWebhookRateLimiter implements WebhookRateLimiter {
  constructor(private readonly database: PostgresDatabase) {}

  async take(route: string, limit: number, now: Date): Promise<RateDecision> {
    const [row] = await this.database.query<{ retry_after: number }>(TAKE, [route, limit, now]);
    const retryAfterSeconds = row!.retry_after;
    return retryAfterSeconds === 0 ? { allowed: true } : { allowed: false, retryAfterSeconds };
  }
}
