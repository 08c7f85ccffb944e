import { jest } from '@jest/globals';
import { InMemoryWebhookRateLimiter } from '../../../src/adapters/webhook/InMemoryWebhookRateLimiter.js';
import { DatabaseUnavailableError, PostgresDatabase, databaseLocation } from '../../../src/adapters/postgres/PostgresDatabase.js';
import { PostgresReplicaLeases } from '../../../src/adapters/postgres/PostgresReplicaLeases.js';
import { PostgresWebhookBacklog } from '../../../src/adapters/postgres/PostgresWebhookBacklog.js';
import { PostgresWebhookInbox, UNLEASED_CLAIM_MS, RECOVER_EVERY_MS } from '../../../src/adapters/postgres/PostgresWebhookInbox.js';
import { DEFAULT_WEBHOOK_LISTENER_SETTINGS } from '../../../src/application/ports/WebhookSettings.js';
import { AcceptWebhook } from '../../../src/application/webhook/AcceptWebhook.js';
import { WebhookAdmission } from '../../../src/application/webhook/WebhookAdmission.js';
import { DELIVERY_MEMORY_MS } from '../../../src/domain/webhook/DeliveryMemory.js';
import { anEvent } from '../../contract/WebhookInbox.contract.js';
import { FakeProcessIdentity } from '../../support/fakes/FakeProcessIdentity.js';
import { FakeSignatureVerifier } from '../../support/fakes/FakeSignatureVerifier.js';
import { aRoute } from '../../support/fakes/FakeWebhookRoutes.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingOrphanProcesses } from '../../support/fakes/RecordingOrphanProcesses.js';
import { SequentialIds } from '../../support/fakes/SequentialIds.js';
import { scratchDatabaseForSuite } from '../../support/postgres.js';

const T0 = new Date('2026-06-01T08:00:00.000Z');
const seconds = (n: number) => n * 1000;

describe('the webhook inbox on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();
  let clock: ManualClock;
  let leases: PostgresReplicaLeases;

  beforeEach(async () => {
    await suite.database.query('TRUNCATE agent_webhook_events, agent_webhook_deliveries, agent_gateways');
    clock = new ManualClock(T0);
    leases = new PostgresReplicaLeases(suite.database);
  });

  afterEach(() => jest.restoreAllMocks());

  /** A gateway's inbox: `claimant` is `<host>:<pid>`; its identity sees the claimants in `dead` dead. */
  const gateway = (claimant: string, options: { dead?: string[]; orphans?: RecordingOrphanProcesses } = {}) => {
    const identity = new FakeProcessIdentity(claimant);
    for (const gone of options.dead ?? []) identity.dead.add(gone);
    return new PostgresWebhookInbox(suite.database, identity, clock, options.orphans);
  };
  /**
   * `claimant`'s lease as the database holds it, on the database's clock: holding for `holdsMs`
   * more (by default its whole `leaseMs`, 30 s), or lapsed `lapsedMs` ago; renewed without a
   * break since `connectedMsAgo` ago (10 minutes by default: a replica that never lost the database).
   */
  const lease = (claimant: string, state: { holdsMs?: number; lapsedMs?: number; leaseMs?: number; connectedMsAgo?: number } = {}) => {
    const host = claimant.slice(0, claimant.lastIndexOf(':'));
    const pid = Number(claimant.slice(claimant.lastIndexOf(':') + 1));
    const leaseMs = state.leaseMs ?? seconds(30);
    const untilMs = state.lapsedMs !== undefined ? -state.lapsedMs : (state.holdsMs ?? leaseMs);
    return suite.database.query(
      `INSERT INTO agent_gateways (claimant, host, pid, started_at, listener, provider, lease_until, lease_ms, connected_since)
       VALUES ($1, $2, $3, $4, NULL, 'built-in', now() + $5 * interval '1 millisecond', $6, now() - $7 * interval '1 millisecond')
       ON CONFLICT (claimant) DO UPDATE SET lease_until = EXCLUDED.lease_until, lease_ms = EXCLUDED.lease_ms, connected_since = EXCLUDED.connected_since`,
      [claimant, host, pid, T0, untilMs, leaseMs, state.connectedMsAgo ?? seconds(600)],
    );
  };
  const epochOf = async (claimant: string) =>
    Number(
      (await suite.database.query<{ epoch: string }>('SELECT epoch::text AS epoch FROM agent_gateways WHERE claimant = $1', [claimant]))[0]
        ?.epoch,
    );
  const later = (ms: number) => new Date(T0.getTime() + ms);
  const claimedBy = async () =>
    Object.fromEntries(
      (
        await suite.database.query<{ id: string; claimant: string | null }>('SELECT id, claimant FROM agent_webhook_events ORDER BY seq')
      ).map((row) => [row.id, row.claimant]),
    );

  it('hands each of 200 events to exactly one of two gateways claiming at the same time', async () => {
    const a = gateway('host-a:1');
    const b = gateway('host-b:2');
    for (let n = 1; n <= 200; n += 1) await (n % 2 === 0 ? a : b).accept(anEvent(n));
    const drain = async (inbox: PostgresWebhookInbox, into: string[]) => {
      for (let event = await inbox.claimNext(); event !== null; event = await inbox.claimNext()) into.push(event.id);
    };
    const byA: string[] = [];
    const byB: string[] = [];

    await Promise.all([...Array.from({ length: 4 }, () => drain(a, byA)), ...Array.from({ length: 4 }, () => drain(b, byB))]);

    const all = [...byA, ...byB];
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
    const owners = await claimedBy();
    for (const id of byA) expect(owners[id]).toBe('host-a:1');
    for (const id of byB) expect(owners[id]).toBe('host-b:2');
    expect(await a.claimNext()).toBeNull();
  });

  it('stores a delivery once an hour whichever gateway receives it, also when two receive it at once', async () => {
    const a = gateway('host-a:1');
    const b = gateway('host-b:2');

    expect(await a.accept(anEvent(1), undefined, 'github:d-1')).toBe(true);
    expect(await b.accept(anEvent(2), undefined, 'github:d-1')).toBe(false);
    const together = await Promise.all([a.accept(anEvent(3), undefined, 'github:d-3'), b.accept(anEvent(4), undefined, 'github:d-3')]);
    expect(together.filter(Boolean)).toHaveLength(1);
    clock.set(later(DELIVERY_MEMORY_MS - 1));
    expect(await b.accept(anEvent(5), undefined, 'github:d-1')).toBe(false);
    clock.set(later(DELIVERY_MEMORY_MS));
    expect(await b.accept(anEvent(6), undefined, 'github:d-1')).toBe(true);

    expect(Object.keys(await claimedBy()).sort()).toEqual(['event-1', 'event-6', together[0] ? 'event-3' : 'event-4'].sort());
  });

  it('never releases the claims of a gateway whose lease holds, however old they are or whatever this host thinks of its process', async () => {
    const a = gateway('test-host:1');
    // On the same host name, and its pid not alive here: another machine named alike.
    const b = gateway('test-host:2', { dead: ['test-host:1'] });
    await lease('test-host:1');
    await a.accept(anEvent(1));
    await a.claimNext();
    await suite.database.query("UPDATE agent_webhook_events SET claimed_at = now() - interval '2 hours'");

    clock.set(later(seconds(29)));
    expect(await b.recover()).toBe(0);
    clock.set(later(DELIVERY_MEMORY_MS));
    expect(await b.recover()).toBe(0);

    expect(await b.claimNext()).toBeNull();
    expect(await claimedBy()).toEqual({ 'event-1': 'test-host:1' });
  });

  it('releases the claims of a gateway whose lease lapsed, in their places, to whichever gateway recovers first', async () => {
    const a = gateway('host-a:1');
    const b = gateway('host-b:2');
    const c = gateway('host-c:3');
    await lease('host-a:1');
    await lease('host-b:2');
    for (const n of [1, 2, 3]) await a.accept(anEvent(n));
    await a.claimNext();
    await a.claimNext();
    await b.claimNext();
    expect(await c.recover()).toBe(0);

    await lease('host-a:1', { lapsedMs: seconds(1) });
    const recovered = await Promise.all([b.recover(), c.recover()]);

    expect(recovered.sort()).toEqual([0, 2]);
    expect(await claimedBy()).toEqual({ 'event-1': null, 'event-2': null, 'event-3': 'host-b:2' });
    expect((await c.claimNext())?.id).toBe('event-1');
    // Its term moved on: were it to come back, it would know its claims were taken over.
    expect(await epochOf('host-a:1')).toBe(2);
  });

  it('after an outage of the database judges no lapsed lease gone until some replica has renewed its own without a break for that lease', async () => {
    const a = gateway('host-a:1');
    const b = gateway('host-b:2');
    await lease('host-a:1');
    await a.accept(anEvent(1));
    await a.claimNext();
    // Both were cut off for longer than a lease: a has not renewed yet, b has, a moment ago.
    await lease('host-a:1', { lapsedMs: seconds(6) });
    await lease('host-b:2', { connectedMsAgo: seconds(1) });

    expect(await b.recover()).toBe(0);
    expect(await claimedBy()).toEqual({ 'event-1': 'host-a:1' });
    // Nobody renewed at all yet (every lease lapsed): nobody is a witness either.
    await lease('host-b:2', { lapsedMs: seconds(6) });
    clock.set(later(RECOVER_EVERY_MS));
    expect(await gateway('host-c:3').recover()).toBe(0);

    // b has renewed for a whole lease (a's, 30 s) since, and a never came back: a is gone.
    await lease('host-b:2', { connectedMsAgo: seconds(31) });
    clock.set(later(2 * RECOVER_EVERY_MS));
    expect(await b.recover()).toBe(1);
  });

  it('releases the claims of a gateway that gave its lease up once they are older than a lease, and at once when this host sees its process dead', async () => {
    const a = gateway('host-a:1');
    const b = gateway('host-b:2');
    await lease('host-a:1');
    await a.accept(anEvent(1));
    await a.claimNext();
    await leases.release('host-a:1');

    await suite.database.query("UPDATE agent_webhook_events SET claimed_at = now() - $1 * interval '1 millisecond'", [
      UNLEASED_CLAIM_MS - seconds(2),
    ]);
    expect(await b.recover()).toBe(0);
    await suite.database.query("UPDATE agent_webhook_events SET claimed_at = now() - $1 * interval '1 millisecond'", [
      UNLEASED_CLAIM_MS + 1,
    ]);
    // A gateway that looked a moment ago waits before it looks again; one that has not, looks.
    expect(await b.recover()).toBe(0);
    expect(await gateway('host-c:3').recover()).toBe(1);

    const dying = gateway('test-host:1');
    expect((await dying.claimNext())?.id).toBe('event-1');
    // Another host cannot tell whether it lives, and its claim is fresh.
    expect(await b.recover()).toBe(0);
    const claimsWhenKilled: Array<Record<string, string | null>> = [];
    const orphans = new (class extends RecordingOrphanProcesses {
      override async killOrphansOf(claimant: string): Promise<number> {
        claimsWhenKilled.push(await claimedBy());
        return super.killOrphansOf(claimant);
      }
    })();
    const here = gateway('test-host:8', { dead: ['test-host:1'], orphans });
    expect(await here.recover()).toBe(1);
    expect(claimsWhenKilled).toEqual([{ 'event-1': 'test-host:1' }]);
    expect(orphans.killedFor).toEqual(['test-host:1']);
  });

  it('looks for gone claimants at most every few seconds, however often it is asked', async () => {
    const a = gateway('host-a:1');
    const b = gateway('host-b:2');
    await lease('host-a:1', { leaseMs: seconds(3) });
    await lease('host-b:2');
    await a.accept(anEvent(1));
    await a.claimNext();

    expect(await b.recover()).toBe(0);
    await lease('host-a:1', { leaseMs: seconds(3), lapsedMs: seconds(1) });
    clock.set(later(seconds(4)));
    expect(await b.recover()).toBe(0);
    clock.set(later(RECOVER_EVERY_MS));
    expect(await b.recover()).toBe(1);
  });

  it('releases at its first recovery the claims an earlier process with the same claimant left', async () => {
    const a = gateway('host-a:1');
    await lease('host-a:1');
    for (const n of [1, 2]) await a.accept(anEvent(n));
    await a.claimNext();
    await a.claimNext();
    await suite.database.query("UPDATE agent_webhook_events SET claim_session = 'an-earlier-process' WHERE id = 'event-1'");

    expect(await a.recover()).toBe(1);
    expect(await claimedBy()).toEqual({ 'event-1': null, 'event-2': 'host-a:1' });
  });

  it('on close lets go of its own claims only, and leaves the database open', async () => {
    const a = gateway('host-a:1');
    const b = gateway('host-b:2');
    for (const n of [1, 2, 3]) await a.accept(anEvent(n));
    await a.claimNext();
    await b.claimNext();

    await a.close();

    expect(await claimedBy()).toEqual({ 'event-1': null, 'event-2': 'host-b:2', 'event-3': null });
    expect((await b.claimNext())?.id).toBe('event-1');
  });

  it('forgets delivery keys older than the hour when it recovers, and keeps the others', async () => {
    const a = gateway('host-a:1');
    await a.accept(anEvent(1), undefined, 'github:old');
    clock.set(later(seconds(10)));
    await a.accept(anEvent(2), undefined, 'github:new');

    clock.set(later(DELIVERY_MEMORY_MS + seconds(5)));
    await a.recover();

    expect((await suite.database.query<{ key: string }>('SELECT key FROM agent_webhook_deliveries')).map((row) => row.key)).toEqual([
      'github:new',
    ]);
    expect(await a.accept(anEvent(3), undefined, 'github:new')).toBe(false);
  });

  it('reports an event whose stored payload is no JSON object, leaves it claimed, and hands out the next', async () => {
    const a = gateway('host-a:1');
    for (const n of [1, 2]) await a.accept(anEvent(n));
    await suite.database.query("UPDATE agent_webhook_events SET payload = '[1, 2' WHERE id = 'event-1'");

    await expect(a.claimNext()).rejects.toThrow(
      /^The webhook event event-1 in the database 127\.0\.0\.1:5432\/agent_test_\w+ has a payload that is not a JSON object;/,
    );
    expect((await a.claimNext())?.id).toBe('event-2');
    expect(await claimedBy()).toEqual({ 'event-1': 'host-a:1', 'event-2': 'host-a:1' });
  });

  /** A gateway holding its lease (renewed for `leaseMs`): its inbox, fenced by that lease, and the lease. */
  const leasedGateway = async (claimant: string, leaseMs = seconds(30)) => {
    const own = new PostgresReplicaLeases(suite.database);
    const host = claimant.slice(0, claimant.lastIndexOf(':'));
    const pid = Number(claimant.slice(claimant.lastIndexOf(':') + 1));
    const renew = () =>
      own.renew(
        { claimant, host, pid, startedAt: T0.toISOString(), listener: null, provider: 'built-in', leaseUntil: later(leaseMs) },
        leaseMs,
      );
    await renew();
    return { inbox: new PostgresWebhookInbox(suite.database, new FakeProcessIdentity(claimant), clock, undefined, own), own, renew };
  };

  it('claims only under a lease that holds on the database clock, and not at all while a renewal failed', async () => {
    const a = await leasedGateway('host-a:1');
    for (const n of [1, 2, 3]) await a.inbox.accept(anEvent(n));
    expect((await a.inbox.claimNext())?.id).toBe('event-1');

    // Its lease lapsed on the database's clock (its renewals did not reach it): no claim.
    await lease('host-a:1', { lapsedMs: 1 });
    expect(await a.inbox.claimNext()).toBeNull();
    expect((await a.renew()).state).toBe('resumed');
    expect((await a.inbox.claimNext())?.id).toBe('event-2');

    // A renewal that failed: no run starts until one works, and this gateway judges nobody.
    jest.spyOn(suite.database, 'query').mockRejectedValueOnce(new Error('connection terminated'));
    await expect(
      a.own.renew(
        {
          claimant: 'host-a:1',
          host: 'host-a',
          pid: 1,
          startedAt: T0.toISOString(),
          listener: null,
          provider: 'built-in',
          leaseUntil: later(seconds(30)),
        },
        seconds(30),
      ),
    ).rejects.toThrow('connection terminated');
    await expect(a.inbox.claimNext()).rejects.toThrow(/lease .* is not renewed yet; it starts no run until it is$/);
    expect(await a.inbox.recover()).toBe(0);
    await a.renew();
    expect((await a.inbox.claimNext())?.id).toBe('event-3');
  });

  it('completes an event only in the term it was claimed in, or when nobody holds it any more', async () => {
    const a = await leasedGateway('host-a:1');
    const b = await leasedGateway('host-b:2');
    for (const n of [1, 2]) await a.inbox.accept(anEvent(n));
    await a.inbox.claimNext();
    await a.inbox.claimNext();
    // a was judged gone (its lease lapsed while b renewed all along) and b took its events over.
    await lease('host-b:2');
    await lease('host-a:1', { lapsedMs: seconds(1) });
    expect(await b.inbox.recover()).toBe(2);
    expect((await b.inbox.claimNext())?.id).toBe('event-1');

    // a comes back: its lease says its claims were taken over, and what it finished does not count.
    expect((await a.renew()).state).toBe('lost');
    await a.inbox.complete('event-1');
    expect(await claimedBy()).toEqual({ 'event-1': 'host-b:2', 'event-2': null });
    // An event released and claimed by nobody since: the run that ended is the only one.
    await a.inbox.complete('event-2');
    expect(await claimedBy()).toEqual({ 'event-1': 'host-b:2' });
    await b.inbox.complete('event-1');
    expect(await claimedBy()).toEqual({});
  });

  it('gives back a claim whose statement was committed while its answer was lost', async () => {
    const a = await leasedGateway('host-a:1');
    for (const n of [1, 2]) await a.inbox.accept(anEvent(n));
    const query = suite.database.query.bind(suite.database);
    // The claim is made, and the connection is cut before its answer comes back.
    jest.spyOn(suite.database, 'query').mockImplementationOnce(async (...args: Parameters<PostgresDatabase['query']>) => {
      await query(...args);
      throw new Error('connection terminated unexpectedly');
    });
    await expect(a.inbox.claimNext()).rejects.toThrow('connection terminated unexpectedly');
    expect(await claimedBy()).toEqual({ 'event-1': 'host-a:1', 'event-2': null });

    expect((await a.inbox.claimNext())?.id).toBe('event-1');
    expect(await claimedBy()).toEqual({ 'event-1': 'host-a:1', 'event-2': null });
  });

  it('counts the waiting and claimed events of every gateway as the backlog', async () => {
    const a = gateway('host-a:1');
    const b = gateway('host-b:2');
    for (const n of [1, 2]) await a.accept(anEvent(n));
    await b.accept(anEvent(3));
    await b.claimNext();
    const backlog = new PostgresWebhookBacklog(suite.database);

    expect(await backlog.waiting()).toBe(3);
    await b.complete('event-1');
    expect(await backlog.waiting()).toBe(2);
    expect(await a.pending()).toBe(2);
  });
});

describe('the webhook inbox when PostgreSQL is unreachable', () => {
  let database: PostgresDatabase;

  beforeAll(async () => {
    database = await PostgresDatabase.open(databaseLocation('postgres://agent:s3cret-pw@127.0.0.1:1/agent_inbox', 'AGENT_DATABASE_URL'));
  });

  afterAll(async () => {
    await database.close();
  });

  it('rejects an accept in one sentence naming the database, never the password', async () => {
    const inbox = new PostgresWebhookInbox(database, new FakeProcessIdentity('host-a:1'), new ManualClock(T0));

    const failure = await inbox.accept(anEvent(1), undefined, 'github:d-1').catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(DatabaseUnavailableError);
    expect((failure as Error).message).toBe(
      'Cannot use the database 127.0.0.1:1/agent_inbox: nothing listens there; check that PostgreSQL runs there and that AGENT_DATABASE_URL (or database.url) names it.',
    );
  });

  it('makes the listener answer unavailable, retry in 30 seconds', async () => {
    const inbox = new PostgresWebhookInbox(database, new FakeProcessIdentity('host-a:1'), new ManualClock(T0));
    const logger = new RecordingLogger();
    const accept = new AcceptWebhook(
      new WebhookAdmission(new FakeSignatureVerifier(), new InMemoryWebhookRateLimiter(), logger, DEFAULT_WEBHOOK_LISTENER_SETTINGS),
      inbox,
      new ManualClock(T0),
      new SequentialIds(),
      logger,
    );

    const outcome = await accept.execute({
      route: aRoute('ci'),
      rawBody: Buffer.from('{"action":"opened"}'),
      headers: { 'x-test-signature': 's3cret', 'x-github-delivery': 'abc' },
      contentType: 'application/json',
    });

    expect(outcome).toEqual({ kind: 'unavailable', retryAfterSeconds: 30 });
    expect(logger.entries.at(-1)).toMatchObject({ level: 'error', fields: { error: expect.stringContaining('127.0.0.1:1/agent_inbox') } });
  });

  it('lets close go by without throwing', async () => {
    const inbox = new PostgresWebhookInbox(database, new FakeProcessIdentity('host-a:1'), new ManualClock(T0));
    await expect(inbox.close()).resolves.toBeUndefined();
  });
});
