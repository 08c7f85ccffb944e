import { AbandonedRuns } from '../../src/application/runs/AbandonedRuns.js';
import { RunClaimants } from '../../src/application/runs/RunClaimants.js';
import { DueJobClaims } from '../../src/application/cron/DueJobClaims.js';
import { RunDueJobs } from '../../src/application/cron/RunDueJobs.js';
import type { CronSettings } from '../../src/application/ports/Settings.js';
import type { RunRecord } from '../../src/domain/runs/RunRecord.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { InMemoryReplicaLeases } from '../support/fakes/InMemoryReplicaLeases.js';
import { InMemoryRunLedger } from '../support/fakes/InMemoryRunLedger.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingOrphanProcesses } from '../support/fakes/RecordingOrphanProcesses.js';
import { cronHarness } from '../support/cronHarness.js';

const NOW = '2026-06-01T09:00:00Z';

const warnings = (log: RecordingLogger) =>
  log.entries
    .filter((entry) => entry.level === 'warn')
    .map((entry) => entry.message)
    .join('\n');

function runningRun(id: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id,
    kind: 'cron',
    subject: 'job1',
    name: 'Digest',
    slot: null,
    event: null,
    delivery_id: null,
    started_at: '2026-06-01T08:55:00.000Z',
    finished_at: null,
    status: 'running',
    model: null,
    prompt: 'Summarise',
    answer: null,
    error: null,
    deliveries: [],
    claimant: 'test-host:42',
    ...overrides,
  };
}

function subject(options: { idleTimeoutMs?: number | null; leases?: InMemoryReplicaLeases } = {}) {
  const clock = new ManualClock(NOW);
  const ledger = new InMemoryRunLedger(undefined, () => clock.now());
  const identity = new FakeProcessIdentity();
  const orphans = new RecordingOrphanProcesses();
  const log = new RecordingLogger();
  const settings = { idleTimeoutMs: options.idleTimeoutMs === undefined ? 600_000 : options.idleTimeoutMs } as CronSettings;
  const abandoned = new AbandonedRuns(ledger, new RunClaimants(identity, options.leases), clock, settings, log, orphans);
  return { clock, ledger, identity, orphans, log, abandoned };
}

describe('the runs of the ledger whose process is gone', () => {
  it('are recorded error "interrupted: …", and what their dead process left running is killed', async () => {
    const s = subject();
    await s.ledger.save(runningRun('gone'));
    await s.ledger.save(runningRun('alive', { claimant: 'test-host:43' }));
    s.identity.dead.add('test-host:42');

    const settled = await s.abandoned.settle();

    expect(settled.map((run) => run.id)).toEqual(['gone']);
    expect(await s.ledger.get('gone')).toMatchObject({
      status: 'error',
      finished_at: '2026-06-01T09:00:00.000Z',
      error: 'interrupted: the process test-host:42 that ran it is gone',
    });
    expect((await s.ledger.get('alive'))?.status).toBe('running');
    expect(s.orphans.killedFor).toEqual(['test-host:42']);
    expect(warnings(s.log)).toContain("run gone of job 'Digest' was recorded interrupted");
  });

  it("are those of another host's gateway whose lease lapsed, and not those of a live one", async () => {
    const leases = new InMemoryReplicaLeases();
    const s = subject({ leases });
    const lease = { host: 'db-1', pid: 10, startedAt: '2026-06-01T08:00:00Z', listener: null, provider: 'built-in ticker' };
    // db-1 renewed last at 08:58:30; db-2 has renewed without a break since 08:59, longer than db-1's lease before now (09:00).
    await leases.renew({ ...lease, claimant: 'db-1:10', leaseUntil: new Date('2026-06-01T08:59:00Z') }, 30_000);
    await leases.renew({ ...lease, claimant: 'db-2:20', leaseUntil: new Date('2026-06-01T09:01:00Z') }, 120_000);
    await s.ledger.save(runningRun('lapsed', { claimant: 'db-1:10' }));
    await s.ledger.save(runningRun('live', { claimant: 'db-2:20' }));

    await s.abandoned.settle();

    expect((await s.ledger.get('lapsed'))?.error).toBe('interrupted: the gateway db-1:10 that ran it stopped renewing its lease');
    expect((await s.ledger.get('live'))?.status).toBe('running');
    // Another host's processes are not this host's to kill.
    expect(s.orphans.killedFor).toEqual([]);
  });

  it("leave this process's own runs, and a webhook run without a claimant, to those who run them", async () => {
    const s = subject();
    await s.ledger.save(runningRun('own', { claimant: 'test-host:1', started_at: '2026-05-01T08:00:00.000Z' }));
    await s.ledger.save(
      runningRun('event', { kind: 'webhook', subject: 'github', claimant: null, started_at: '2026-05-01T08:00:00.000Z' }),
    );

    expect(await s.abandoned.settle()).toEqual([]);
  });

  it('take a cron run without a claimant (an earlier version wrote it) once it is older than a run can go', async () => {
    const s = subject({ idleTimeoutMs: null });
    await s.ledger.save(runningRun('recent', { claimant: null, started_at: '2026-06-01T08:45:00.000Z' }));
    await s.ledger.save(runningRun('stale', { claimant: null, started_at: '2026-06-01T08:15:00.000Z' }));

    await s.abandoned.settle();

    expect((await s.ledger.get('recent'))?.status).toBe('running');
    expect((await s.ledger.get('stale'))?.error).toMatch(/^interrupted: its run started at 2026-06-01T08:15:00.000Z/);
  });

  it('never stop a claim: a ledger that fails is logged', async () => {
    const s = subject();
    s.ledger.running = async () => {
      throw new Error('disk on fire');
    };
    expect(await s.abandoned.settle(['test-host:42'])).toEqual([]);
    expect(warnings(s.log)).toContain('could not settle the interrupted runs');
    expect(s.orphans.killedFor).toEqual(['test-host:42']);
  });
});

describe('the claim every trigger shares', () => {
  it('settles the ledger at its first look, then whenever it recovers a job, with the orphans of its dead claimant', async () => {
    const h = cronHarness();
    const orphans = new RecordingOrphanProcesses();
    const abandoned = new AbandonedRuns(h.ledger, h.claimants, h.clock, h.settings, h.log, orphans);
    const tick = new RunDueJobs(
      new DueJobClaims(h.repository, h.tickLock, h.clock, h.claimants, h.settings),
      h.clock,
      h.settings,
      h.log,
      () => h.execution,
      () => abandoned,
    );
    await h.ledger.save(runningRun('before', { claimant: 'test-host:7', started_at: '2026-06-01T07:00:00.000Z' }));
    h.identity.dead.add('test-host:7');

    await tick.claim({ limit: 4 });
    expect((await h.ledger.get('before'))?.status).toBe('error');

    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Hourly', name: 'hourly' });
    await h.repository.modify((jobs) => ({
      jobs: jobs.map((j) => ({ ...j, state: 'running' as const, claim: { by: 'test-host:8', at: '2026-06-01T08:00:00Z' } })),
      result: undefined,
    }));
    await h.ledger.save(runningRun('during', { subject: job.id, claimant: 'test-host:8', started_at: '2026-06-01T08:00:00.000Z' }));
    await tick.claim({ limit: 4 });
    expect((await h.ledger.get('during'))?.status).toBe('running');

    h.identity.dead.add('test-host:8');
    const claims = await tick.claim({ limit: 4 });

    expect(claims.recovered.map((each) => each.id)).toEqual([job.id]);
    expect(await h.ledger.get('during')).toMatchObject({
      status: 'error',
      error: 'interrupted: the process test-host:8 that ran it is gone',
    });
    expect(h.repository.get(job.id)).toMatchObject({
      state: 'scheduled',
      last_status: 'error',
      last_error: 'interrupted: the process test-host:8 that ran it is gone',
    });
    expect(orphans.killedFor).toEqual(['test-host:7', 'test-host:8']);
  });
});

describe('a recovered job whose run ended before the ledger showed it running', () => {
  it('is recorded interrupted, as started when it was claimed; a record of its own run is not doubled', async () => {
    const h = cronHarness();
    const abandoned = new AbandonedRuns(h.ledger, h.claimants, h.clock, h.settings, h.log, new RecordingOrphanProcesses());
    const tick = new RunDueJobs(
      new DueJobClaims(h.repository, h.tickLock, h.clock, h.claimants, h.settings),
      h.clock,
      h.settings,
      h.log,
      () => h.execution,
      () => abandoned,
    );
    const quick = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Quick', name: 'quick' });
    const shown = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Shown', name: 'shown' });
    // An earlier run of `quick`, before the claim: not the interrupted one.
    await h.ledger.save(
      runningRun('quick-earlier', {
        subject: quick.id,
        status: 'ok',
        finished_at: '2026-06-01T07:01:00.000Z',
        started_at: '2026-06-01T07:00:00.000Z',
      }),
    );
    await h.ledger.save(runningRun('shown-own', { subject: shown.id, claimant: 'test-host:9', started_at: '2026-06-01T08:00:01.000Z' }));
    await h.repository.modify((jobs) => ({
      jobs: jobs.map((j) => ({ ...j, state: 'running' as const, claim: { by: 'test-host:9', at: '2026-06-01T08:00:00Z' } })),
      result: undefined,
    }));
    h.identity.dead.add('test-host:9');

    await tick.claim({ limit: 0, dueBy: new Date(0) });

    const runs = await h.ledger.list({ kind: 'cron', subject: quick.id, limit: 5 });
    expect(runs.map((run) => run.id)).toEqual([`${quick.id}.20260601T080000000Z`, 'quick-earlier']);
    expect(runs[0]).toMatchObject({
      status: 'error',
      started_at: '2026-06-01T08:00:00.000Z',
      error: 'interrupted: the process test-host:9 that ran it is gone',
      claimant: 'test-host:9',
      prompt: 'Quick',
    });
    expect((await h.ledger.list({ kind: 'cron', subject: shown.id, limit: 5 })).map((run) => [run.id, run.status])).toEqual([
      ['shown-own', 'error'],
    ]);
  });
});
