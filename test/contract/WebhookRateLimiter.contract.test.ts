import 'reflect-metadata';
import { PostgresDatabase, databaseLocation } from '../../src/adapters/postgres/PostgresDatabase.js';
import { PostgresWebhookRateLimiter } from '../../src/adapters/postgres/PostgresWebhookRateLimiter.js';
import { InMemoryWebhookRateLimiter } from '../../src/adapters/webhook/InMemoryWebhookRateLimiter.js';
import { scratchDatabase, type ScratchDatabase } from '../helpers/postgres.js';
import { describeWebhookRateLimiterContract } from './WebhookRateLimiter.contract.js';

describeWebhookRateLimiterContract('InMemoryWebhookRateLimiter', async () => ({ limiter: new InMemoryWebhookRateLimiter() }));

describe('on PostgreSQL', () => {
  const T0 = Date.parse('2026-11-22T10:00:00.000Z');
  const at = (seconds: number) => new Date(T0 + seconds * 1000);
  let scratch: ScratchDatabase;
  let database: PostgresDatabase;
  let other: PostgresDatabase;

  beforeAll(async () => {
    scratch = await scratchDatabase();
    database = await scratch.open();
    // A second pool of the same database: what another gateway replica holds.
    other = await scratch.open();
  });

  afterAll(async () => {
    await database?.close();
    await other?.close();
    await scratch?.drop();
  });

  beforeEach(async () => {
    await database.query('TRUNCATE agent_webhook_rate');
  });

  describeWebhookRateLimiterContract('PostgresWebhookRateLimiter', async () => {
    await database.query('TRUNCATE agent_webhook_rate');
    return { limiter: new PostgresWebhookRateLimiter(database) };
  });

  it('lets exactly `limit` through of simultaneous requests for one route sent by two replicas', async () => {
    const replicas = [new PostgresWebhookRateLimiter(database), new PostgresWebhookRateLimiter(other)];
    const limit = 10;

    const decisions = await Promise.all(
      Array.from({ length: 3 * limit }, (_, i) => replicas[i % 2]!.take('ci', limit, new Date(T0 + i))),
    );

    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(limit);
    expect(await database.query('SELECT sum(hits)::int AS counted FROM agent_webhook_rate')).toEqual([{ counted: limit }]);
  });

  it('counts what one replica allowed in what the other allows', async () => {
    const first = new PostgresWebhookRateLimiter(database);
    const second = new PostgresWebhookRateLimiter(other);

    expect(await first.take('ci', 2, at(0))).toEqual({ allowed: true });
    expect(await second.take('ci', 2, at(10))).toEqual({ allowed: true });

    expect(await first.take('ci', 2, at(20))).toEqual({ allowed: false, retryAfterSeconds: 41 });
    expect(await second.take('ci', 2, at(20))).toEqual({ allowed: false, retryAfterSeconds: 41 });
  });

  it('keeps one row per route and second, and drops those two windows old, of every route, as new seconds begin', async () => {
    const limiter = new PostgresWebhookRateLimiter(database);
    for (let i = 0; i < 5; i += 1) await limiter.take('quiet', 30, at(0));
    expect(await database.query('SELECT route, hits FROM agent_webhook_rate')).toEqual([{ route: 'quiet', hits: 5 }]);

    await limiter.take('busy', 30, at(120));
    expect((await database.query<{ route: string }>('SELECT route FROM agent_webhook_rate ORDER BY route')).map((row) => row.route)).toEqual(['busy', 'quiet']);

    await limiter.take('busy', 30, at(121));
    expect(await database.query('SELECT route, hits FROM agent_webhook_rate ORDER BY bucket')).toEqual([
      { route: 'busy', hits: 1 },
      { route: 'busy', hits: 1 },
    ]);
  });

  it('fails with the database named, never the password, when the database is away', async () => {
    const away = await PostgresDatabase.open(databaseLocation('postgres://agent:s3cret-pw@127.0.0.1:1/agent', 'AGENT_DATABASE_URL'));
    try {
      const failure = await new PostgresWebhookRateLimiter(away).take('ci', 30, at(0)).catch((error: Error) => error);
      expect(String(failure)).toContain('Cannot use the database 127.0.0.1:1/agent: nothing listens there');
      expect(String(failure)).not.toContain('s3cret-pw');
    } finally {
      await away.close();
    }
  });
});
