import 'reflect-metadata';
import { PostgresDatabase, databaseLocation } from '../../src/adapters/postgres/PostgresDatabase.js';
import { PostgresWebhookRateLimiter } from '../../src/adapters/postgres/PostgresWebhookRateLimiter.js';
import { InMemoryWebhookRateLimiter } from '../../src/adapters/webhook/InMemoryWebhookRateLimiter.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
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

    const decisions = await Promise.all(Array.from({ length: 3 * limit }, (_, i) => replicas[i % 2]!.take('ci', limit, new Date(T0 + i))));

    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(limit);
    expect(await database.query('SELECT sum(hits)::int AS counted FROM agent_webhook_rate')).toEqual([{ counted: limit }]);
  });

  it('counts each request once when requests of two seconds cross, as at the turn of a second under load', async () => {
    const limiter = new PostgresWebhookRateLimiter(database);
    // Requests of the second before and of the next, sent together: a count of the earlier second
    // still under way when the later one begins.
    const times = Array.from({ length: 20 }, (_, i) => new Date(T0 + (i % 2 === 0 ? 999 : 1000)));

    const decisions = await Promise.all(times.map((time) => limiter.take('ci', 100, time)));

    expect(decisions.every((decision) => decision.allowed)).toBe(true);
    expect(await database.query('SELECT sum(hits)::int AS counted FROM agent_webhook_rate')).toEqual([{ counted: 20 }]);
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
    expect(
      (await database.query<{ route: string }>('SELECT route FROM agent_webhook_rate ORDER BY route')).map((row) => row.route),
    ).toEqual(['busy', 'quiet']);

    await limiter.take('busy', 30, at(121));
    expect(await database.query('SELECT route, hits FROM agent_webhook_rate ORDER BY bucket')).toEqual([
      { route: 'busy', hits: 1 },
      { route: 'busy', hits: 1 },
    ]);
  });

  it('counts a busy route ahead, as many as the second before let through, and drops what a second did not use', async () => {
    const limiter = new PostgresWebhookRateLimiter(database);
    const counted = async () =>
      (await database.query<{ bucket: string; hits: number }>('SELECT bucket::text, hits FROM agent_webhook_rate ORDER BY bucket')).map(
        (row) => row.hits,
      );
    // A limit of 6,000 a minute: up to 100 a second may be counted ahead.
    for (let i = 0; i < 40; i += 1) expect(await limiter.take('busy', 6000, new Date(T0 + i))).toEqual({ allowed: true });
    expect(await counted()).toEqual([40]);

    // The next second: its first request counts 40 at once, the next 39 cost nothing more.
    expect(await limiter.take('busy', 6000, at(1))).toEqual({ allowed: true });
    expect(await counted()).toEqual([40, 40]);
    for (let i = 1; i < 10; i += 1) await limiter.take('busy', 6000, new Date(T0 + 1000 + i));
    expect(await counted()).toEqual([40, 40]);

    // 30 counted and not used in that second are not let through in the next: it asks again.
    expect(await limiter.take('busy', 6000, at(2))).toEqual({ allowed: true });
    expect(await counted()).toEqual([40, 40, 10]);
  });

  it('never lets more than the limit through in a window when replicas count ahead', async () => {
    const replicas = [new PostgresWebhookRateLimiter(database), new PostgresWebhookRateLimiter(other)];
    const limit = 600; // up to 10 a second counted ahead
    let allowed = 0;
    // 30 requests a second for 70 s, alternating replicas: twice the limit over the minute.
    for (let second = 0; second < 70; second += 1) {
      const decisions = await Promise.all(
        Array.from({ length: 30 }, (_, i) => replicas[i % 2]!.take('ci', limit, new Date(T0 + second * 1000 + i * 30))),
      );
      if (second < 60) allowed += decisions.filter((decision) => decision.allowed).length;
    }
    expect(allowed).toBeLessThanOrEqual(limit);
    expect(allowed).toBeGreaterThan(limit - 2 * 10);
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
