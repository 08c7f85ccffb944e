import { jest } from '@jest/globals';
import { PostgresDatabase, databaseLocation } from '../../../src/adapters/postgres/PostgresDatabase.js';
import {
  PostgresSubscriptionRepository,
  SUBSCRIPTION_CACHE_MAX_AGE_MS,
} from '../../../src/adapters/postgres/PostgresSubscriptionRepository.js';
import { SubscriptionStoreError } from '../../../src/application/ports/WebhookSubscriptionRepository.js';
import type { WebhookSubscription } from '../../../src/domain/webhook/WebhookSubscription.js';
import { subscriptionRecordOf } from '../../../src/domain/webhook/subscriptionRecord.js';
import { aSubscription } from '../../contract/WebhookSubscriptionRepository.contract.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { scratchDatabase, type ScratchDatabase } from '../../support/postgres.js';

const put = (subscription: WebhookSubscription) => () => ({ next: subscription, result: undefined });
const names = async (repo: PostgresSubscriptionRepository) => (await repo.load()).subscriptions.map((each) => each.name);

describe('webhook subscriptions shared by processes on PostgreSQL', () => {
  let scratch: ScratchDatabase;
  /** Two pools on one database: two gateways, or a gateway and a command. */
  let first: PostgresDatabase;
  let second: PostgresDatabase;
  const unwatches: Array<() => void> = [];

  /** Watches `repo`; `nextNotice()` resolves at the next notice it handled (ask before causing it). */
  const watching = (repo: PostgresSubscriptionRepository) => {
    let waiting: Array<() => void> = [];
    unwatches.push(
      repo.watch(() => {
        const woken = waiting;
        waiting = [];
        for (const wake of woken) wake();
      }),
    );
    return { nextNotice: () => new Promise<void>((resolve) => waiting.push(resolve)) };
  };

  /** A subscription written straight into the table, announced to nobody. */
  const writeUnannounced = (subscription: WebhookSubscription) =>
    first.query('INSERT INTO agent_webhook_subscriptions (name, record) VALUES ($1, $2)', [
      subscription.name,
      JSON.stringify(subscriptionRecordOf(subscription)),
    ]);

  beforeAll(async () => {
    scratch = await scratchDatabase();
    first = await scratch.open();
    second = await PostgresDatabase.open(databaseLocation(scratch.url, 'the test URL'));
  });

  beforeEach(async () => {
    await first.query('TRUNCATE agent_webhook_subscriptions');
  });

  afterEach(() => {
    for (const unwatch of unwatches.splice(0)) unwatch();
    jest.restoreAllMocks();
  });

  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await scratch?.drop();
  });

  it('serves its snapshot until a notice comes, and sees an update made through another pool once it came', async () => {
    const writer = new PostgresSubscriptionRepository(first);
    const reader = new PostgresSubscriptionRepository(second);
    const { nextNotice } = watching(reader);
    await nextNotice();
    expect(await names(reader)).toEqual([]);

    await writeUnannounced(aSubscription('unannounced'));
    expect(await names(reader)).toEqual([]);

    const noticed = nextNotice();
    await writer.update('payments', put(aSubscription('payments')));
    await noticed;

    expect((await reader.load()).subscriptions).toEqual([aSubscription('payments'), aSubscription('unannounced')]);
  });

  it('reads afresh on reload, and a burst of reloads costs at most two queries', async () => {
    const reader = new PostgresSubscriptionRepository(second);
    const { nextNotice } = watching(reader);
    await nextNotice();
    expect(await names(reader)).toEqual([]);
    await writeUnannounced(aSubscription('created-elsewhere'));
    const queries = jest.spyOn(second, 'query');

    const snapshots = await Promise.all(Array.from({ length: 10 }, () => reader.reload()));

    expect(snapshots.map((snapshot) => snapshot.subscriptions.map((each) => each.name))).toEqual(Array(10).fill(['created-elsewhere']));
    expect(queries.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(queries.mock.calls.length).toBeLessThanOrEqual(2);
    const reloadQueries = queries.mock.calls.length;
    expect(await names(reader)).toEqual(['created-elsewhere']);
    expect(queries.mock.calls.length).toBe(reloadQueries);
  });

  it('trusts its snapshot without a notice for at most a minute', async () => {
    const clock = new ManualClock('2026-06-01T08:00:00Z');
    const reader = new PostgresSubscriptionRepository(second, clock);
    const { nextNotice } = watching(reader);
    await nextNotice();
    expect(await names(reader)).toEqual([]);
    await writeUnannounced(aSubscription('unannounced'));

    clock.advance(SUBSCRIPTION_CACHE_MAX_AGE_MS - 1);
    expect(await names(reader)).toEqual([]);
    clock.advance(1);
    expect(await names(reader)).toEqual(['unannounced']);
  });

  it('reads the table on every load while not watching', async () => {
    const reader = new PostgresSubscriptionRepository(second);
    expect(await names(reader)).toEqual([]);

    await writeUnannounced(aSubscription('unannounced'));

    expect(await names(reader)).toEqual(['unannounced']);
  });

  it('loses none of the updates two processes make to one subscription at the same time', async () => {
    const repositories = [new PostgresSubscriptionRepository(first), new PostgresSubscriptionRepository(second)];
    const increment = (current: WebhookSubscription | null) => ({
      next: aSubscription('counter', { prompt: String(Number(current?.prompt ?? '0') + 1) }),
      result: undefined,
    });

    await Promise.all(Array.from({ length: 40 }, (_, index) => repositories[index % 2]!.update('counter', increment)));

    const [stored] = (await repositories[0]!.load()).subscriptions;
    expect(stored?.prompt).toBe('40');
  });

  it('names the database, never the password, when it cannot be reached', async () => {
    const away = await PostgresDatabase.open(
      databaseLocation('postgres://agent:s3cret-pw@127.0.0.1:1/subscriptions', 'AGENT_DATABASE_URL'),
    );
    const repo = new PostgresSubscriptionRepository(away);
    try {
      for (const attempt of [() => repo.load(), () => repo.update('payments', put(aSubscription('payments')))]) {
        const failure = await attempt().catch((error: unknown) => error);

        expect(failure).toBeInstanceOf(SubscriptionStoreError);
        expect((failure as SubscriptionStoreError).reason).toBe('unavailable');
        expect((failure as Error).message).toMatch(
          /^Cannot (read|change) the webhook subscriptions in the database 127\.0\.0\.1:1\/subscriptions: nothing listens there; /,
        );
        expect((failure as Error).message).not.toContain('s3cret-pw');
      }
    } finally {
      await away.close();
    }
  });
});
