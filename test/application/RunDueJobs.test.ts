import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import { cronHarness } from '../support/cronHarness.js';
import { DueJobClaims } from '../../src/application/cron/DueJobClaims.js';
import { RunDueJobs } from '../../src/application/cron/RunDueJobs.js';
import { RunClaimants } from '../../src/application/runs/RunClaimants.js';
import type { ReplicaLeases } from '../../src/application/ports/ReplicaLeases.js';

const MINUTE = 60_000;

/** Lets pending promise callbacks run until `condition` holds (no timers, no wall clock). */
async function waitFor(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1000 && !condition(); turn += 1) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error('condition never held');
}

describe('a tick', () => {
  it('runs a job whose time has come and schedules its next run', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 30m', prompt: 'Check the queue', deliver: 'local' });
    h.clock.advance(30 * MINUTE);

    const report = await h.runDueJobs.execute();

    expect(report.ran.map((run) => run.job.id)).toEqual([job.id]);
    const stored = h.repository.get(job.id)!;
    expect(stored).toMatchObject({ state: 'scheduled', last_status: 'ok', repeat: { times: null, completed: 1 } });
    expect(stored.next_run_at).toBe('2026-06-01T09:00:00Z');
    expect(stored.last_run_at).toBe('2026-06-01T08:30:00Z');
  });

  it('says when each job starts, for progress on a terminal', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '1m', prompt: 'Ping', name: 'ping' });
    h.clock.advance(MINUTE);
    const started: string[] = [];

    await h.runDueJobs.execute({ onRunStart: (j) => started.push(j.name) });

    expect(started).toEqual([job.name]);
  });

  it('does nothing and writes nothing when no job is due', async () => {
    const h = cronHarness();
    await h.createJob.execute({ schedule: 'every 30m', prompt: 'Check the queue' });
    const writesBefore = h.repository.writes;

    const report = await h.runDueJobs.execute();

    expect(report.ran).toEqual([]);
    expect(h.repository.writes).toBe(writesBefore);
  });

  it('returns at once without running anything when another process holds the tick lock', async () => {
    const h = cronHarness();
    await h.createJob.execute({ schedule: '1m', prompt: 'Ping' });
    h.clock.advance(MINUTE);
    h.tickLock.heldElsewhere = true;

    const report = await h.runDueJobs.execute();

    expect(report).toMatchObject({ lockBusy: true, ran: [] });
    expect(h.agent.requests).toHaveLength(0);
  });

  it('persists the claim before the run starts', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Report' });
    h.clock.advance(60 * MINUTE);
    let seenDuringRun: unknown;
    h.agent.reply(() => {
      seenDuringRun = h.repository.get(job.id);
      return 'done';
    });

    await h.runDueJobs.execute();

    expect(seenDuringRun).toMatchObject({
      state: 'running',
      claim: { by: 'test-host:1', at: '2026-06-01T09:00:00Z' },
      next_run_at: '2026-06-01T10:00:00Z',
    });
    expect(h.tickLock.held).toBe(false);
  });

  it('fires an overdue recurring job once and computes the next run from now', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Hourly' });
    h.clock.advance(5 * 60 * MINUTE + 7 * MINUTE);

    const report = await h.runDueJobs.execute();
    const again = await h.runDueJobs.execute();

    expect(report.ran).toHaveLength(1);
    expect(again.ran).toHaveLength(0);
    expect(h.repository.get(job.id)!.next_run_at).toBe('2026-06-01T14:07:00Z');
  });

  it('completes a one-shot after its run', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '30m', prompt: 'Remind me' });
    h.clock.advance(30 * MINUTE);

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({
      state: 'completed',
      enabled: false,
      next_run_at: null,
      repeat: { times: 1, completed: 1 },
      last_status: 'ok',
    });
  });

  it('does not run a one-shot found more than 120 s late, and records it as missed', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '30m', prompt: 'Remind me' });
    h.clock.advance(33 * MINUTE);

    const report = await h.runDueJobs.execute();

    expect(report.ran).toHaveLength(0);
    expect(report.missed.map((missed) => missed.id)).toEqual([job.id]);
    const stored = h.repository.get(job.id)!;
    expect(stored).toMatchObject({ state: 'completed', last_status: 'error' });
    expect(stored.last_error).toMatch(/^missed:/);
  });

  it('completes a recurring job when its repeat count is used up', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 10m', prompt: 'Twice', repeat: 2 });
    h.clock.advance(10 * MINUTE);
    await h.runDueJobs.execute();
    expect(h.repository.get(job.id)!.state).toBe('scheduled');
    h.clock.advance(10 * MINUTE);

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({ state: 'completed', repeat: { times: 2, completed: 2 } });
  });

  it('runs due jobs in parallel up to max_parallel_jobs', async () => {
    const h = cronHarness({ settings: { maxParallelJobs: 2 } });
    for (let i = 0; i < 5; i += 1) await h.createJob.execute({ schedule: '1m', prompt: `job ${i}` });
    h.clock.advance(MINUTE);
    let active = 0;
    let peak = 0;
    h.agent.defaultReply = async () => {
      active += 1;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setImmediate(resolve));
      active -= 1;
      return 'ok';
    };

    const report = await h.runDueJobs.execute();

    expect(report.ran).toHaveLength(5);
    expect(peak).toBe(2);
  });

  it('records when each run really started when runs wait for a free slot', async () => {
    const h = cronHarness({ settings: { maxParallelJobs: 1 } });
    const first = await h.createJob.execute({ schedule: '1m', prompt: 'first' });
    const second = await h.createJob.execute({ schedule: '1m', prompt: 'second' });
    h.clock.advance(MINUTE);
    h.agent.defaultReply = () => {
      h.clock.advance(5 * MINUTE);
      return 'done';
    };

    await h.runDueJobs.execute();

    expect(h.repository.get(first.id)!.last_run_at).toBe('2026-06-01T08:01:00Z');
    expect(h.repository.get(second.id)!.last_run_at).toBe('2026-06-01T08:06:00Z');
  });

  it('runs a slow script outside the tick lock: other jobs finish and another tick is not blocked', async () => {
    const h = cronHarness();
    let finishScript!: () => void;
    h.scripts.scripts['slow.sh'] = { stdout: 'done slowly', until: new Promise<void>((resolve) => (finishScript = resolve)) };
    const slow = await h.createJob.execute({ schedule: '1m', prompt: 'slow', script: 'slow.sh' });
    const quick = await h.createJob.execute({ schedule: '1m', prompt: 'quick' });
    h.clock.advance(MINUTE);

    const firstTick = h.runDueJobs.execute();
    await waitFor(() => h.repository.get(quick.id)!.last_status === 'ok');
    const quickFinished = h.repository.get(quick.id)!;
    const slowMeanwhile = h.repository.get(slow.id)!;
    await h.createJob.execute({ schedule: '1m', prompt: 'later' });
    h.clock.advance(MINUTE);
    const secondTick = await h.runDueJobs.execute();
    finishScript();
    await firstTick;

    expect(quickFinished.state).toBe('completed');
    expect(slowMeanwhile.state).toBe('running');
    expect(secondTick.lockBusy).toBe(false);
    expect(secondTick.ran.map((run) => run.job.prompt)).toEqual(['later']);
    expect(h.repository.get(slow.id)).toMatchObject({ state: 'completed', last_status: 'ok' });
  });

  it('returns a running job whose process is gone to service with an interrupted error', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Hourly' });
    await h.repository.modify((jobs) => ({
      jobs: jobs.map((j) => ({ ...j, state: 'running' as const, claim: { by: 'test-host:999', at: '2026-06-01T08:00:00Z' } })),
      result: undefined,
    }));
    h.identity.dead.add('test-host:999');

    const report = await h.runDueJobs.execute();

    expect(report.recovered.map((r) => r.id)).toEqual([job.id]);
    const stored = h.repository.get(job.id)!;
    expect(stored).toMatchObject({ state: 'scheduled', last_status: 'error', claim: null });
    expect(stored.last_error).toMatch(/^interrupted:/);
  });

  it('leaves a running job alone while its claimant lives and the claim is fresh', async () => {
    const h = cronHarness();
    await h.createJob.execute({ schedule: 'every 1h', prompt: 'Hourly' });
    await h.repository.modify((jobs) => ({
      jobs: jobs.map((j) => ({ ...j, state: 'running' as const, claim: { by: 'other-host:5', at: '2026-06-01T08:00:00Z' } })),
      result: undefined,
    }));
    h.clock.advance(29 * MINUTE);

    const report = await h.runDueJobs.execute();

    expect(report.recovered).toEqual([]);
  });

  it('recovers a claim older than max(3 x idle budget, 30 min) from another host', async () => {
    const h = cronHarness({ settings: { idleTimeoutMs: 20 * MINUTE } });
    await h.createJob.execute({ schedule: 'every 1h', prompt: 'Hourly' });
    await h.repository.modify((jobs) => ({
      jobs: jobs.map((j) => ({ ...j, state: 'running' as const, claim: { by: 'other-host:5', at: '2026-06-01T08:00:00Z' } })),
      result: undefined,
    }));
    h.clock.advance(59 * MINUTE);
    expect((await h.runDueJobs.execute()).recovered).toHaveLength(0);
    h.clock.advance(2 * MINUTE);

    expect((await h.runDueJobs.execute()).recovered).toHaveLength(1);
  });

  it('recovers the run of a gateway on another host whose lease on a shared store lapsed, and only that one', async () => {
    const h = cronHarness();
    const [lapsedJob, liveJob, laptopJob] = await Promise.all(
      ['lapsed', 'live', 'laptop'].map((name) => h.createJob.execute({ schedule: 'every 1h', prompt: name, name })),
    );
    const claimants: Record<string, string> = { [lapsedJob!.id]: 'db-1:10', [liveJob!.id]: 'db-2:20', [laptopJob!.id]: 'laptop:30' };
    await h.repository.modify((jobs) => ({
      jobs: jobs.map((j) => ({ ...j, state: 'running' as const, claim: { by: claimants[j.id]!, at: '2026-06-01T08:00:00Z' } })),
      result: undefined,
    }));
    const asked: string[][] = [];
    const leases: ReplicaLeases = {
      renew: async () => ({ epoch: 1, state: 'held' }),
      release: async () => undefined,
      live: async () => [],
      lapsed: async (names) => {
        asked.push([...names].sort());
        return new Set(names.filter((name) => name === 'db-1:10'));
      },
    };
    const dueJobs = new DueJobClaims(h.repository, h.tickLock, h.clock, new RunClaimants(h.identity, leases), h.settings);
    const tick = new RunDueJobs(dueJobs, h.clock, h.settings, h.log, () => h.execution);

    const claims = await tick.claim({ limit: 4 });

    expect(claims.recovered.map((job) => job.id)).toEqual([lapsedJob!.id]);
    expect(claims.recovered[0]!.last_error).toMatch(/^interrupted: .*db-1:10 that ran it stopped renewing its lease/);
    expect(asked[0]).toEqual(['db-1:10', 'db-2:20', 'laptop:30']);
    expect(h.repository.get(liveJob!.id)!.state).toBe('running');
    expect(h.repository.get(laptopJob!.id)!.state).toBe('running');
  });

  it('records a failed run as error with the reason and still counts it', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Hourly', deliver: 'telegram' });
    h.clock.advance(60 * MINUTE);
    h.agent.reply(new AgentRunError('idle_timeout', 'idle timeout: no output for 600 s'));

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({
      state: 'scheduled',
      last_status: 'error',
      last_error: 'idle timeout: no output for 600 s',
      repeat: { completed: 1 },
    });
    expect(h.channel.sent.map((s) => s.text)).toEqual(["⚠️ Cron job 'Hourly' failed: idle timeout: no output for 600 s"]);
  });
});
