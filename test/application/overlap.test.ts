import { cronHarness } from '../support/cronHarness.js';

const HOUR = 3_600_000;

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

  it('is kept on the job, and an edit changes it', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Hourly', overlap: 'queue' });
    expect(job.overlap).toBe('queue');
    expect((await h.editJob.execute({ job: job.id, overlap: 'skip' })).overlap).toBe('skip');
  });
});
