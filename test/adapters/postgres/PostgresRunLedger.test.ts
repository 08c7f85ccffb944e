import { PostgresDatabase, databaseLocation } from '../../../src/adapters/postgres/PostgresDatabase.js';
import { PostgresRunLedger } from '../../../src/adapters/postgres/PostgresRunLedger.js';
import type { RunRetention } from '../../../src/domain/runs/RunRecord.js';
import { aRun, aTranscript, LEDGER_NOW } from '../../contract/RunLedger.contract.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { scratchDatabaseForSuite } from '../../support/postgres.js';

describe('run ledger on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();
  const ledger = (retention: RunRetention = { count: 200, days: 30 }, database = suite.database) =>
    new PostgresRunLedger(database, retention, new ManualClock(LEDGER_NOW));
  const ids = async (runs: Promise<Array<{ id: string }>>) => (await runs).map((run) => run.id);
  /** A row as a process that keeps no retention (or another version) might have left it. */
  const insertRow = (id: string, subject: string, startedAt: string, record: unknown) =>
    suite.database.query('INSERT INTO agent_runs (id, kind, subject, started_at, record) VALUES ($1, $2, $3, $4, $5)', [
      id,
      'cron',
      subject,
      startedAt,
      JSON.stringify(record),
    ]);

  beforeEach(async () => {
    await suite.database.query('TRUNCATE agent_runs, agent_run_transcripts');
  });

  it('deletes the transcript rows of the runs a save deletes, and of runs started before the age limit', async () => {
    const runs = ledger({ count: 2, days: 30 });
    const old = aRun(0, { id: 'old', started_at: '2026-05-01T08:00:00.000Z' });
    await runs.saveTranscript(old, aTranscript(0));
    for (let n = 1; n <= 3; n += 1) {
      await runs.save(aRun(n));
      await runs.saveTranscript(aRun(n), aTranscript(n));
    }
    await runs.save(aRun(4));

    const rows = await suite.database.query<{ id: string }>('SELECT id FROM agent_run_transcripts ORDER BY id');
    expect(rows.map((row) => row.id)).toEqual(['run-3']);
  });

  it('stores a NUL and half of a surrogate pair, which jsonb refuses, as U+FFFD', async () => {
    const runs = ledger();

    await runs.save(aRun(1, { answer: 'a\u0000b', prompt: 'cut \uD83D', error: '\uDE00 too' }));

    expect(await runs.get('run-1')).toEqual(aRun(1, { answer: 'a\uFFFDb', prompt: 'cut \uFFFD', error: '\uFFFD too' }));
  });

  it('leaves out a stored record it cannot read', async () => {
    const runs = ledger();
    await runs.save(aRun(1));
    await insertRow('odd', 'job1', aRun(2).started_at, { id: 'odd', kind: 'chore' });

    expect(await runs.get('odd')).toBeNull();
    expect(await ids(runs.list({ limit: 10 }))).toEqual(['run-1']);
    expect(await ids(runs.list({ kind: 'cron', subject: 'job1', limit: 10 }))).toEqual(['run-1']);
  });

  it("reads only each job's newest runs, whatever rows another process left", async () => {
    for (let n = 1; n <= 4; n += 1) await insertRow(`run-${n}`, 'job1', aRun(n).started_at, aRun(n));
    await insertRow('run-5', 'job2', aRun(5).started_at, aRun(5, { subject: 'job2' }));
    const runs = ledger({ count: 2, days: 30 });

    expect(await ids(runs.list({ limit: 10 }))).toEqual(['run-5', 'run-4', 'run-3']);
    expect(await ids(runs.list({ kind: 'cron', limit: 2 }))).toEqual(['run-5', 'run-4']);
    expect(await ids(runs.list({ kind: 'cron', subject: 'job1', limit: 10 }))).toEqual(['run-4', 'run-3']);
    expect(await runs.get('run-2')).toBeNull();
    expect(await runs.get('run-3')).toEqual(aRun(3));
  });

  it('orders runs that started at the same instant by id, byte by byte', async () => {
    const runs = ledger();
    const at = aRun(1).started_at;
    for (const id of ['B', 'a', 'a-2', 'Z']) await runs.save(aRun(1, { id, started_at: at }));

    expect(await ids(runs.list({ limit: 10 }))).toEqual(['a-2', 'a', 'Z', 'B']);
    expect(await ids(runs.list({ kind: 'cron', subject: 'job1', limit: 10 }))).toEqual(['a-2', 'a', 'Z', 'B']);
  });

  it('lists the runs of a job or route of every kind when no kind is given', async () => {
    const runs = ledger();
    await runs.save(aRun(1, { subject: 'shared' }));
    await runs.save(aRun(2, { id: 'event-2', kind: 'webhook', subject: 'shared' }));
    await runs.save(aRun(3, { subject: 'other' }));

    expect(await ids(runs.list({ subject: 'shared', limit: 10 }))).toEqual(['event-2', 'run-1']);
    expect(await ids(runs.list({ subject: 'shared', limit: 1 }))).toEqual(['event-2']);
  });

  it('deletes, as it saves, runs too old of any job or route, never the one it saves', async () => {
    const runs = ledger({ count: 200, days: 30 });
    await insertRow('gone-job-run', 'removed-job', '2026-05-01T08:00:00.000Z', aRun(1, { id: 'gone-job-run', subject: 'removed-job' }));

    await runs.save(aRun(1, { id: 'old', started_at: '2026-05-02T08:00:00.000Z' }));

    const rows = await suite.database.query<{ id: string }>('SELECT id FROM agent_runs ORDER BY id');
    expect(rows.map((row) => row.id)).toEqual(['old']);
  });

  it('does not wait for a run another statement holds, and deletes it at a later save', async () => {
    const runs = ledger({ count: 2, days: 30 });
    for (const n of [1, 2]) await runs.save(aRun(n));

    await suite.database.transaction(async (tx) => {
      // Another process saving run-1 again holds its row until it commits.
      await tx.query("SELECT id FROM agent_runs WHERE id = 'run-1' FOR UPDATE");
      let saving = true;
      const waitsForLock = (async () => {
        while (saving) {
          const [row] = await suite.database.query<{ waiting: string }>(
            "SELECT count(*) AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          );
          if (Number(row!.waiting) > 0) throw new Error('the save waits for the run another statement holds');
        }
      })();
      try {
        await Promise.race([runs.save(aRun(3)), waitsForLock]);
      } finally {
        saving = false;
      }
      await waitsForLock;
      tx.keepNothing();
    });
    expect(await ids(runs.list({ limit: 10 }))).toEqual(['run-3', 'run-2']);
    expect((await suite.database.query('SELECT id FROM agent_runs')).length).toBe(3);

    await runs.save(aRun(4));
    const rows = await suite.database.query<{ id: string }>('SELECT id FROM agent_runs ORDER BY id');
    expect(rows.map((row) => row.id)).toEqual(['run-3', 'run-4']);
  });

  it('keeps saving while other processes save runs of the same job at the same moment', async () => {
    const other = await PostgresDatabase.open(databaseLocation(suite.url, 'the test URL'));
    try {
      const retention = { count: 2, days: 30 };
      const [here, there] = [ledger(retention), ledger(retention, other)];
      // Each run saved as it starts and again as it ends, by both processes, in any order.
      const saves = Array.from({ length: 40 }, (_, n) => aRun(n % 20)).map((run, n) => (n % 2 === 0 ? here : there).save(run));

      await Promise.all(saves);
      expect((await here.list({ kind: 'cron', subject: 'job1', limit: 10 })).length).toBeLessThanOrEqual(2);

      // What a save skipped because another held it, the next one deletes.
      await there.save(aRun(20));
      const rows = await suite.database.query<{ id: string }>('SELECT id FROM agent_runs ORDER BY started_at DESC');
      expect(rows.map((row) => row.id)).toEqual(['run-20', 'run-19']);
    } finally {
      await other.close();
    }
  });
});
