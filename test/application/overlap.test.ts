import { cronHarness } from '../support/cronHarness.js';

/** Lets the run path go on until `done` holds (the fake agent is called a few turns after a tick starts). */
async function until(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1000 && !done(); turn += 1) await new Promise((resolve) => setImmediate(resolve));
  if (!done()) throw new Error('the run path never got there');
}

const HOUR = 3_600_000;
/** Within a claim's 30 minutes before it counts as stale. */
const TEN_MINUTES = 600_000;

/** An hourly job whose first run takes 90 minutes: the slot an hour in comes while it runs. */
async function longRun(overlap: 'skip' | 'queue' | undefined) {
  const h = cronHarness();
  const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Hourly', ...(overlap ? { overlap } : {}) });
  h.clock.advance(HOUR);
  h.agent.reply(() => {
    h.clock.advance(HOUR + HOUR / 2);
    return 'Done.';
  });
  await h.runDueJobs.execute();
  return { h, job };
}

describe('a slot that comes while the run before still runs', () => {
  it('is skipped by default: recorded skipped, and the job waits for its next slot', async () => {
    const { h, job } = await longRun(undefined);

    const stored = h.repository.get(job.id)!;
    expect(stored).toMatchObject({ state: 'scheduled', last_status: 'ok', repeat: { completed: 1 } });
    expect(Date.parse(stored.next_run_at!)).toBeGreaterThan(h.clock.now().getTime());
    const runs = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 10 });
    expect(runs.map((run) => run.status).sort()).toEqual(['ok', 'skipped']);
    const skipped = runs.find((run) => run.status === 'skipped')!;
    expect(skipped.error).toContain('the run before was still running');
    const ran = runs.find((run) => run.status === 'ok')!;
    expect(Date.parse(skipped.slot!) - Date.parse(ran.started_at)).toBe(HOUR);

    expect((await h.runDueJobs.execute()).ran).toEqual([]);
  });

  it('with --overlap queue, runs once as soon as the run ends', async () => {
    const { h, job } = await longRun('queue');

    const stored = h.repository.get(job.id)!;
    expect(Date.parse(stored.next_run_at!)).toBeLessThanOrEqual(h.clock.now().getTime());
    const again = await h.runDueJobs.execute();

    expect(again.ran.map((run) => run.report.outcome.status)).toEqual(['ok']);
    expect(h.repository.get(job.id)!.repeat.completed).toBe(2);
    const runs = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 10 });
    expect(runs.map((run) => run.status)).toEqual(['ok', 'ok']);
  });

  it('with --overlap allow, runs the slot beside the run, each run recorded and counted on its own', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 10m', prompt: 'x', name: 'Hourly', overlap: 'allow' });
    const releases: Array<() => void> = [];
    const held = () => new Promise<string>((resolve) => releases.push(() => resolve('Done.')));
    h.agent.reply(held, held);
    h.clock.advance(TEN_MINUTES);
    const first = h.runDueJobs.execute();
    await until(() => releases.length === 1);
    h.clock.advance(TEN_MINUTES);
    const second = h.runDueJobs.execute();
    await until(() => releases.length === 2);

    const running = h.repository.get(job.id)!;
    expect(running.state).toBe('running');
    expect(running.claims_beside).toHaveLength(1);
    expect(Date.parse(running.next_run_at!)).toBe(h.clock.now().getTime() + TEN_MINUTES);
    // The first run ends while the second still runs: the job stays running, the second now its run.
    h.clock.advance(60_000);
    releases[0]!();
    await first;
    const afterFirst = h.repository.get(job.id)!;
    expect(afterFirst).toMatchObject({ state: 'running', last_status: 'ok', repeat: { completed: 1 } });
    expect(afterFirst.claims_beside ?? []).toEqual([]);
    expect(afterFirst.claim!.at).toBe(running.claims_beside![0]!.at);
    releases[1]!();
    await second;

    const stored = h.repository.get(job.id)!;
    expect(stored).toMatchObject({ state: 'scheduled', claim: null, last_status: 'ok', repeat: { completed: 2 } });
    const runs = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 10 });
    expect(runs.map((run) => run.status)).toEqual(['ok', 'ok']);
    const [later, earlier] = runs;
    expect(Date.parse(later!.started_at)).toBeLessThan(Date.parse(earlier!.finished_at!));
  });

  it('with --overlap allow, a run beside another whose process is gone is recovered on its own', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Hourly', overlap: 'allow' });
    const now = h.clock.now().toISOString();
    const alive = { by: 'test-host:2', at: now };
    const gone = { by: 'test-host:3', at: now };
    await h.repository.updateById(job.id, (current) => ({
      job: { ...current, state: 'running', claim: alive, claims_beside: [gone] },
      result: null,
    }));
    h.identity.dead.add(gone.by);

    const tick = await h.runDueJobs.execute();

    expect(tick.recovered.map((each) => each.id)).toEqual([job.id]);
    const stored = h.repository.get(job.id)!;
    expect(stored).toMatchObject({ state: 'running', claim: alive, last_status: 'error' });
    expect(stored.claims_beside ?? []).toEqual([]);
    expect(stored.last_error).toContain('interrupted:');
  });

  it('is kept on the job, and an edit changes it', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Hourly', overlap: 'queue' });
    expect(job.overlap).toBe('queue');
    expect((await h.editJob.execute({ job: job.id, overlap: 'skip' })).overlap).toBe('skip');
  });
});
