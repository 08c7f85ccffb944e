import { jest } from '@jest/globals';
import pg from 'pg';
import type { PostgresDatabase } from '../../../src/adapters/postgres/PostgresDatabase.js';
import { PostgresJobRepository } from '../../../src/adapters/postgres/PostgresJobRepository.js';
import { PostgresReplicaLeases } from '../../../src/adapters/postgres/PostgresReplicaLeases.js';
import type { Job } from '../../../src/domain/Job.js';
import { anHourlyJob, jobIdFor } from '../../support/jobs.js';
import { scratchDatabase, type ScratchDatabase } from '../../support/postgres.js';

const counted = (job: Job): Job => ({ ...job, repeat: { ...job.repeat, completed: job.repeat.completed + 1 } });

/** What became of the transaction that last locked the row (its xmax): `committed` or `aborted`. */
async function lastLockerOf(database: PostgresDatabase, id: string): Promise<string> {
  const [row] = await database.query<{ status: string }>(
    `SELECT pg_xact_status((((pg_current_xact_id()::text::bigint >> 32) << 32) | xmax::text::bigint)::text::xid8) AS status
       FROM agent_jobs WHERE id = $1`,
    [id],
  );
  return row!.status;
}

describe('jobs on PostgreSQL: how changes reach the rows', () => {
  let scratch: ScratchDatabase;
  let database: PostgresDatabase;
  let repo: PostgresJobRepository;

  beforeAll(async () => {
    scratch = await scratchDatabase();
    database = await scratch.open();
  });

  beforeEach(async () => {
    await database.query('TRUNCATE agent_jobs');
    repo = new PostgresJobRepository(database);
  });

  afterAll(async () => {
    await database?.close();
    await scratch?.drop();
  });

  it('applies a change by id again to what another process wrote between its read and its write, losing neither', async () => {
    const job = await repo.create(anHourlyJob(jobIdFor(1)), true);
    const other = new pg.Client({ connectionString: scratch.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE agent_jobs SET record = jsonb_set(record, '{prompt}', '"written by another process"') WHERE id = $1`, [
        job.id,
      ]);
      let calls = 0;
      let firstRead!: () => void;
      const read = new Promise<void>((resolve) => (firstRead = resolve));
      const updating = repo.updateById(job.id, (current) => {
        calls += 1;
        if (calls === 1) firstRead();
        return { job: counted(current), result: calls };
      });
      // Our read saw the version before the other process's write; that write commits before ours.
      // (A store that locks the row to read it waits for the other process instead: it is let go
      // on once it waits, and then reads only once.)
      let looking = true;
      const waitsForLock = (async () => {
        while (looking) {
          const [row] = await database.query<{ waiting: string }>(
            "SELECT count(*) AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          );
          if (Number(row!.waiting) > 0) return;
        }
      })();
      await Promise.race([read, waitsForLock]);
      looking = false;
      await other.query('COMMIT');

      expect(await updating).toBe(2);
      expect(await repo.findById(job.id)).toMatchObject({ prompt: 'written by another process', repeat: { completed: 1 } });
    } finally {
      await other.end();
    }
  });

  it('writes changes by id made at the same time in shared statements, each kept', async () => {
    const ids = Array.from({ length: 20 }, (_, n) => jobIdFor(n + 1));
    for (const id of ids) await repo.create(anHourlyJob(id), true);

    await Promise.all(ids.map((id) => repo.updateById(id, (current) => ({ job: counted(current), result: null }))));

    for (const id of ids) expect((await repo.findById(id))!.repeat.completed).toBe(1);
    // Rows written by one statement carry the id of its one transaction.
    const [{ writes }] = (await database.query<{ writes: string }>('SELECT count(DISTINCT xmin::text) AS writes FROM agent_jobs')) as [
      { writes: string },
    ];
    expect(Number(writes)).toBeLessThanOrEqual(3);
  });

  it('keeps nothing of a change that changes nothing: its transaction is rolled back, so it waits for no disk write', async () => {
    const job = await repo.create(anHourlyJob(jobIdFor(1)), true);

    await expect(repo.update(job.id, (current) => ({ job: current, result: 'same' }))).resolves.toBe('same');

    expect(await lastLockerOf(database, job.id)).toBe('aborted');
    await repo.update(job.id, (current) => ({ job: counted(current), result: null }));
    expect(await repo.findById(job.id)).toMatchObject({ repeat: { completed: 1 } });
  });

  it('leaves the rows of running jobs unlocked by a tick that does not ask for them, so that runs ending on other replicas do not wait for it', async () => {
    const job = await repo.create(anHourlyJob(jobIdFor(1)), true);
    await repo.updateById(job.id, (current) => ({ job: { ...current, state: 'running' }, result: null }));
    const xmax = async () =>
      (await database.query<{ xmax: string }>('SELECT xmax::text AS xmax FROM agent_jobs WHERE id = $1', [job.id]))[0]!.xmax;
    const before = await xmax();

    await repo.settleDue(new Date(0), 10, ({ running }) => ({ changed: [], result: running.length }), { running: false });

    expect(await xmax()).toBe(before);
    await repo.settleDue(new Date(0), 10, ({ running }) => ({ changed: [], result: running.length }));
    expect(await xmax()).not.toBe(before);
  });

  it("lets a gateway's tick see and claim nothing while its lease has lapsed on the database's clock, or a renewal of it failed", async () => {
    const job = await repo.create(anHourlyJob(jobIdFor(1)), true);
    await repo.updateById(job.id, (current) => ({ job: { ...current, state: 'running' }, result: null }));
    const leases = new PostgresReplicaLeases(database);
    const fenced = new PostgresJobRepository(database, leases);
    const replica = {
      claimant: 'host-a:1',
      host: 'host-a',
      pid: 1,
      startedAt: '2026-06-01T07:00:00Z',
      listener: null,
      provider: 'built-in ticker',
      leaseUntil: new Date(),
    };
    const look = () => fenced.settleDue(new Date(0), 10, ({ running }) => ({ changed: [], result: running.length }));
    await leases.renew(replica, 30_000);
    expect(await look()).toBe(1);

    await database.query("UPDATE agent_gateways SET lease_until = now() - interval '1 second'");
    expect(await look()).toBe(0);
    await leases.renew(replica, 30_000);
    expect(await look()).toBe(1);

    // A renewal that failed: nothing until one works again.
    jest.spyOn(database, 'query').mockRejectedValueOnce(new Error('connection terminated'));
    await expect(leases.renew(replica, 30_000)).rejects.toThrow('connection terminated');
    expect(await look()).toBe(0);
    await leases.renew(replica, 30_000);
    expect(await look()).toBe(1);
    // A process that holds no lease (a command) is not fenced.
    expect(await repo.settleDue(new Date(0), 10, ({ running }) => ({ changed: [], result: running.length }))).toBe(1);
    await database.query('TRUNCATE agent_gateways');
  });

  it('keeps nothing of a tick that changed nothing, though it locked the running jobs', async () => {
    const job = await repo.create(anHourlyJob(jobIdFor(1)), true);
    await repo.updateById(job.id, (current) => ({ job: { ...current, state: 'running' }, result: null }));

    await repo.settleDue(new Date(0), 10, ({ running }) => ({ changed: [], result: running.length }));

    expect(await lastLockerOf(database, job.id)).toBe('aborted');
  });

  it('reads a row written before jobs had a time zone of their own as in the configured zone, and stores a zone given later in its record', async () => {
    const job = await repo.create({ ...anHourlyJob(jobIdFor(1)), timezone: 'America/New_York' }, true);
    await database.query(`UPDATE agent_jobs SET record = record - 'timezone' WHERE id = $1`, [job.id]);
    expect((await repo.findById(job.id))!.timezone).toBeNull();

    await repo.updateById(job.id, (current) => ({ job: { ...current, timezone: 'Asia/Tokyo' }, result: null }));
    const [row] = await database.query<{ zone: string }>(`SELECT record->>'timezone' AS zone FROM agent_jobs WHERE id = $1`, [job.id]);
    expect(row!.zone).toBe('Asia/Tokyo');
  });
});
