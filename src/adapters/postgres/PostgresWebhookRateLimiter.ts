import type { RateDecision, WebhookRateLimiter } from '../../application/ports/WebhookRateLimiter.js';
import type { PostgresDatabase, PreparedStatement } from './PostgresDatabase.js';

const RESERVE: PreparedStatement = {
  name: 'agent_webhook_rate_reserve',
  text: 'SELECT agent_webhook_rate_reserve($1, $2, $3, $4) AS answer',
};

/** What this process holds of one route's count in the current second. */
interface RouteSecond {
  /** The second (seconds since the epoch) the rest is about. */
  second: number;
  /** Requests counted in the database for this second and not let through yet. */
  reserved: number;
  /** Requests let through in this second. */
  used: number;
  /** Requests let through in the second before, when it was the one before `second`. */
  usedBefore: number;
  /** The answer of the database when it refused in this second, and the limit it was asked. */
  refused: { retryAfterSeconds: number; limit: number } | null;
  /** The reservation under way, which takes wait for rather than asking again. */
  reserving: Promise<void> | null;
}

/** A request let through on what `held` counted, or refused as it was; null when `held` has neither. */
function decisionFrom(held: RouteSecond, limit: number): RateDecision | null {
  if (held.reserved > 0) {
    held.reserved -= 1;
    held.used += 1;
    return { allowed: true };
  }
  if (held.refused && held.refused.limit === limit) return { allowed: false, retryAfterSeconds: held.refused.retryAfterSeconds };
  return null;
}

/**
 * The webhook rate limit kept in the database, so that it holds across every gateway sharing
 * it (docs/scaling.md): requests counted per route and whole second in `agent_webhook_rate`,
 * by agent_webhook_rate_reserve (the migration 'webhook rate limit'), one statement per
 * round trip; reservations of one route wait for each other there, whatever process sends them.
 *
 * A busy route does not cost a round trip per request: this process counts several requests of
 * the current second at once — as many as it let through in the second before less those it let
 * through in this one so far, at most a sixtieth of the limit, at least one — and lets them
 * through as they come, within that second only; what is left at its end is dropped. So every request let through anywhere was counted in
 * the database in its own second or earlier, and the limit is never looser; it is stricter by
 * what a process reserved and did not use (at most a sixtieth of the limit a second). With a
 * limit under 120 a minute every request is its own round trip, as exact as the window allows.
 * A refusal holds for the rest of its second (nothing leaves the window before the next), unless
 * the limit asked changes. Counting by whole seconds refuses up to one second longer than an
 * exact window, never shorter. Counts are committed without waiting for the disk: a crash of the
 * database server forgets at most the last moment's counts, letting that many more through once.
 * Times are the callers' `now`: the window is as exact as the gateways' clocks agree (NTP).
 * Throws DatabaseUnavailableError when the database cannot be used.
 */
export class PostgresWebhookRateLimiter implements WebhookRateLimiter {
  private readonly routes = new Map<string, RouteSecond>();

  constructor(private readonly database: PostgresDatabase) {}

  async take(route: string, limit: number, now: Date): Promise<RateDecision> {
    const second = Math.floor(now.getTime() / 1000);
    for (;;) {
      const held = this.secondOf(route, second);
      const decided = decisionFrom(held, limit);
      if (decided) return decided;
      if (held.reserving) {
        await held.reserving;
        continue;
      }
      const want = Math.max(1, Math.min(held.usedBefore - held.used, Math.floor(limit / 60)));
      const reserving = this.reserve(route, limit, now, want, held).finally(() => {
        if (held.reserving === reserving) held.reserving = null;
      });
      held.reserving = reserving;
      await reserving;
      // What it counted is in `held`, even when a request of the next second has begun a count
      // of its own meanwhile: taken from there, so that no request is counted twice.
      const counted = decisionFrom(held, limit);
      if (counted) return counted;
    }
  }

  /** Asks the database for `want` requests of this second, into `held`. */
  private async reserve(route: string, limit: number, now: Date, want: number, held: RouteSecond): Promise<void> {
    const [row] = await this.database.query<{ answer: number }>(RESERVE, [route, limit, now, want]);
    const answer = row!.answer;
    if (answer > 0) {
      held.reserved += answer;
      held.refused = null;
    } else {
      held.refused = { retryAfterSeconds: -answer, limit };
    }
  }

  /** This process's count of `route` in `second`, started afresh when the second changed. */
  private secondOf(route: string, second: number): RouteSecond {
    const held = this.routes.get(route);
    // A caller whose clock is behind the last one takes from the later second: counted later, so stricter.
    if (held && held.second >= second) return held;
    // Reservations of an earlier second are dropped: they were counted in that second.
    const fresh: RouteSecond = {
      second,
      reserved: 0,
      used: 0,
      usedBefore: held && held.second === second - 1 ? held.used : 0,
      refused: null,
      reserving: null,
    };
    this.routes.set(route, fresh);
    if (this.routes.size > 1000) this.forgetQuiet(second);
    return fresh;
  }

  /** Drops the routes not seen for a while (removed subscriptions, quiet routes). */
  private forgetQuiet(second: number): void {
    for (const [route, held] of this.routes) if (held.second < second - 1 && !held.reserving) this.routes.delete(route);
  }
}
