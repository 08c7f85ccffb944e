import type { Clock } from '../../application/ports/Clock.js';
import {
  SubscriptionStoreError,
  type SubscriptionChange,
  type SubscriptionSnapshot,
  type WebhookSubscriptionRepository,
} from '../../application/ports/WebhookSubscriptionRepository.js';
import type { WebhookSubscription } from '../../domain/webhook/WebhookSubscription.js';
import { readSubscriptionRecord, readSubscriptionRecords, subscriptionRecordOf } from '../../domain/webhook/subscriptionRecord.js';
import { SystemClock } from '../system/SystemClock.js';
import { DatabaseUnavailableError, databaseProblem, type PostgresDatabase } from './PostgresDatabase.js';

interface SubscriptionRow {
  name: string;
  record: unknown;
}

/** The channel every change to the subscriptions is announced on, at commit. */
export const SUBSCRIPTIONS_CHANGED_CHANNEL = 'agent_subscriptions_changed';
const ANNOUNCE = `SELECT pg_notify('${SUBSCRIPTIONS_CHANGED_CHANNEL}', '')`;
/**
 * The advisory lock of one name, held by its update: a row lock cannot cover a name nobody has
 * yet, so two first subscriptions of one name would both see none.
 */
const LOCK_NAME = "SELECT pg_advisory_xact_lock(hashtextextended('agent_webhook_subscription:' || $1, 0))";
/**
 * How long a snapshot is trusted without a notice: the backstop for a listening connection that
 * died without a word (a notice lost that way would otherwise be missed until the next one).
 */
export const SUBSCRIPTION_CACHE_MAX_AGE_MS = 60_000;

/** One read of the table, and how many invalidations had happened when it began. */
interface Read {
  generation: number;
  promise: Promise<SubscriptionSnapshot>;
}

/**
 * Webhook subscriptions in PostgreSQL (docs/scaling.md), one row each in
 * `agent_webhook_subscriptions` holding the record `webhook_subscriptions.json` holds under its
 * name, for every gateway and command sharing the database.
 *
 * `update` is one transaction holding an advisory lock on the name, so changes to one
 * subscription from any number of processes take turns and none is lost; a write is announced
 * with `NOTIFY agent_subscriptions_changed` at commit.
 *
 * The cache rule: `load` answers from the last snapshot read only while all of these hold, and
 * reads the table otherwise:
 * - the repository is watching (`watch()`) and its LISTEN on that channel is in place;
 * - no notice came, no update went through this repository, and no `reload()` was asked, since
 *   that snapshot's read began;
 * - the snapshot is younger than SUBSCRIPTION_CACHE_MAX_AGE_MS.
 * So a change made through this repository is seen at once, one made elsewhere as soon as its
 * notice arrives (or the listening connection is open again: it is reopened every second, and
 * counts as a notice), and `reload()` always reads what was committed before it was called. Reads
 * take turns: at most one query of this repository is under way, and a load that must see what
 * was committed before it began waits for the next read instead of joining the one under way, so
 * a burst of reloads costs two queries, not one each.
 *
 * Without `watch()` (a command that loads once) every load reads the table. While the database
 * cannot be reached, a watching repository's `load` answers from its last snapshot, however old.
 */
export class PostgresSubscriptionRepository implements WebhookSubscriptionRepository {
  /** Every sign that the stored subscriptions may have changed counts one up. */
  private generation = 0;
  /** Watches whose LISTEN is in place. */
  private listening = 0;
  private cached: { generation: number; readAt: number; snapshot: SubscriptionSnapshot } | null = null;
  private current: Read | null = null;
  private next: Promise<SubscriptionSnapshot> | null = null;

  constructor(
    private readonly database: PostgresDatabase,
    private readonly clock: Clock = new SystemClock(),
  ) {}

  /**
   * Listens for changes made by any process, so that `load` may answer from its snapshot until
   * one is announced (the cache rule above); `onChange` is called after each notice has dropped
   * the snapshot (and once the listening connection is in place, or open again after it broke).
   * Returns the function that stops listening.
   */
  watch(onChange: () => void = () => undefined): () => void {
    let confirmed = false;
    let stopped = false;
    const stop = this.database.listen(SUBSCRIPTIONS_CHANGED_CHANNEL, () => {
      if (!confirmed && !stopped) {
        confirmed = true;
        this.listening += 1;
      }
      this.invalidate();
      onChange();
    });
    return () => {
      if (stopped) return;
      stopped = true;
      stop();
      if (confirmed) this.listening -= 1;
      this.invalidate();
    };
  }

  async load(): Promise<SubscriptionSnapshot> {
    const cached = this.cached;
    if (
      cached !== null &&
      this.listening > 0 &&
      cached.generation === this.generation &&
      this.clock.now().getTime() - cached.readAt < SUBSCRIPTION_CACHE_MAX_AGE_MS
    ) {
      return cached.snapshot;
    }
    try {
      return await this.read();
    } catch (error) {
      // A watching gateway goes on serving the routes it last read while the database is away:
      // its listener answers 503 at the inbox anyway, and a run in progress keeps its route.
      if (cached !== null && this.listening > 0) return cached.snapshot;
      throw error;
    }
  }

  /**
   * The subscriptions as committed when it is called, whatever the snapshot: for a request naming
   * a route the snapshot does not have (created a moment ago by another process, its notice not
   * here yet). The snapshot read becomes the cached one. Throws SubscriptionStoreError.
   */
  reload(): Promise<SubscriptionSnapshot> {
    this.invalidate();
    return this.read();
  }

  async update<T>(name: string, change: (current: WebhookSubscription | null) => SubscriptionChange<T>): Promise<T> {
    let changing = false;
    let writing = false;
    try {
      return await this.database.transaction(async (tx) => {
        await tx.query(LOCK_NAME, [name]);
        const [row] = await tx.query<SubscriptionRow>('SELECT name, record FROM agent_webhook_subscriptions WHERE name = $1', [name]);
        const reading = row ? readSubscriptionRecord(name, row.record) : null;
        const current = reading?.ok ? reading.subscription : null;
        changing = true;
        const { next, result } = change(current);
        changing = false;
        if (next === current) return result;
        writing = true;
        if (next === null) {
          await tx.query('DELETE FROM agent_webhook_subscriptions WHERE name = $1', [name]);
        } else {
          await tx.query(
            'INSERT INTO agent_webhook_subscriptions (name, record) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET record = EXCLUDED.record',
            [name, JSON.stringify(subscriptionRecordOf(next))],
          );
        }
        await tx.query(ANNOUNCE);
        return result;
      });
    } catch (error) {
      // The change's own error is passed on as it is, whatever it is.
      if (changing || !(error instanceof DatabaseUnavailableError)) throw error;
      throw this.unavailable('change', error);
    } finally {
      // Committed or not (a failed COMMIT may have committed), the snapshot may be out of date.
      if (writing) this.invalidate();
    }
  }

  private invalidate(): void {
    this.generation += 1;
  }

  /** A snapshot from a read that began after the last invalidation. */
  private read(): Promise<SubscriptionSnapshot> {
    const current = this.current;
    if (current === null) return this.startRead();
    if (current.generation === this.generation) return current.promise;
    this.next ??= current.promise
      .catch(() => undefined)
      .then(() => {
        this.next = null;
        return this.read();
      });
    return this.next;
  }

  private startRead(): Promise<SubscriptionSnapshot> {
    const generation = this.generation;
    const readAt = this.clock.now().getTime();
    const promise = this.query()
      .then((snapshot) => {
        if (this.cached === null || this.cached.generation <= generation) this.cached = { generation, readAt, snapshot };
        return snapshot;
      })
      .finally(() => {
        if (this.current?.promise === promise) this.current = null;
      });
    this.current = { generation, promise };
    return promise;
  }

  private async query(): Promise<SubscriptionSnapshot> {
    let rows: SubscriptionRow[];
    try {
      rows = await this.database.query<SubscriptionRow>('SELECT name, record FROM agent_webhook_subscriptions');
    } catch (error) {
      throw this.unavailable('read', error);
    }
    return readSubscriptionRecords(rows.map((row) => [row.name, row.record] as const));
  }

  private unavailable(action: 'read' | 'change', error: unknown): SubscriptionStoreError {
    const cause = error instanceof DatabaseUnavailableError ? (error.cause ?? error) : error;
    return new SubscriptionStoreError(
      'unavailable',
      `Cannot ${action} the webhook subscriptions in the database ${this.database.location.label}: ${databaseProblem(cause)}; check that PostgreSQL runs there and that AGENT_DATABASE_URL (or database.url) names it.`,
      { cause: error },
    );
  }
}
