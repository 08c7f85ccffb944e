import { cronHarness } from '../support/cronHarness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** An hourly job (due at 09:00, an hour after the harness's 08:00), and the clock moved `late` past its slot. */
async function overdueHourly(h: ReturnType<typeof cronHarness>, late: number, catchUp?: 'once' | 'skip') {
  const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Water the plants', name: 'Plants', catch_up: catchUp ?? null });
  h.clock.advance(HOUR + late);
  return job;
}

describe('catching up on an overdue recurring slot', () => {
  it('once (the default): runs the job found overdue once, its next run computed from now', async () => {
    const h = cronHarness();
    const job = await overdueHourly(h, 2.5 * HOUR);

    const report = await h.runDueJobs.execute();

    expect(report.ran).toHaveLength(1);
    expect(report.skipped).toEqual([]);
    expect(h.agent.requests).toHaveLength(1);
    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'ok', repeat: { completed: 1 }, next_run_at: '2026-06-01T12:30:00Z' });
  });

  it('skip: runs nothing, logs and records the skipped slot, and waits for the next slot from now', async () => {
    const h = cronHarness({ settings: { catchUp: 'skip' } });
    const job = await overdueHourly(h, 2.5 * HOUR);

    const report = await h.runDueJobs.execute();

    expect(report.ran).toEqual([]);
    expect(h.agent.requests).toHaveLength(0);
    expect(h.outputs.latest(job.id)).toBeUndefined();
    expect(report.skipped.map((skip) => ({ id: skip.job.id, slot: skip.slot.toISOString(), missed: skip.missedSlots }))).toEqual([
      { id: job.id, slot: '2026-06-01T09:00:00.000Z', missed: 3 },
    ]);
    const stored = h.repository.get(job.id)!;
    expect(stored).toMatchObject({
      state: 'scheduled',
      last_status: null,
      last_run_at: null,
      repeat: { completed: 0 },
      failure_streak: 0,
      next_run_at: '2026-06-01T12:30:00Z',
    });

    const [run] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 10 });
    expect(run).toMatchObject({
      status: 'skipped',
      slot: '2026-06-01T09:00:00.000Z',
      started_at: '2026-06-01T11:30:00.000Z',
      finished_at: '2026-06-01T11:30:00.000Z',
      model: null,
      prompt: null,
      answer: null,
      deliveries: [],
    });
    expect(run!.error).toBe(
      'skipped: the job was due at 2026-06-01T09:00:00Z but nothing ran it until 2026-06-01T11:30:00Z (3 slots missed); with the catch-up policy skip it waits for its next run at 2026-06-01T12:30:00Z',
    );
    expect(h.log.entries).toContainEqual(
      expect.objectContaining({
        level: 'info',
        message: expect.stringMatching(/^job 'Plants' skipped its overdue slot of 2026-06-01T09:00:00Z \(catch-up policy skip\)/),
      }),
    );

    // The next slot runs as usual.
    h.clock.advance(HOUR);
    expect((await h.runDueJobs.execute()).ran).toHaveLength(1);
  });

  it('skip: still runs a slot the tick came round to a few seconds, or up to the grace, late', async () => {
    const h = cronHarness({ settings: { catchUp: 'skip' } });
    const job = await overdueHourly(h, 5_000);
    expect((await h.runDueJobs.execute()).ran).toHaveLength(1);

    h.clock.set(new Date(Date.parse(h.repository.get(job.id)!.next_run_at!) + 120_000));
    const report = await h.runDueJobs.execute();

    expect(report.ran).toHaveLength(1);
    expect(report.skipped).toEqual([]);
    expect(h.repository.get(job.id)!.repeat.completed).toBe(2);
  });

  it('skip: a grace of 0 still lets a slot less than a minute late run', async () => {
    const h = cronHarness({ settings: { catchUp: 'skip', oneShotGraceMs: 0 } });
    await overdueHourly(h, 45_000);

    expect((await h.runDueJobs.execute()).ran).toHaveLength(1);
  });

  it("follows the job's own policy over the configured one, both ways", async () => {
    const h = cronHarness({ settings: { catchUp: 'skip' } });
    const runsOnce = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Once', catch_up: 'once' });
    const follows = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Follows' });
    h.clock.advance(3 * HOUR);

    const report = await h.runDueJobs.execute();

    expect(report.ran.map((run) => run.job.id)).toEqual([runsOnce.id]);
    expect(report.skipped.map((skip) => skip.job.id)).toEqual([follows.id]);

    const g = cronHarness({ settings: { catchUp: 'once' } });
    const skips = await g.createJob.execute({ schedule: 'every 1h', prompt: 'Skips', catch_up: 'skip' });
    g.clock.advance(3 * HOUR);
    expect((await g.runDueJobs.execute()).skipped.map((skip) => skip.job.id)).toEqual([skips.id]);
  });

  it('leaves one-shots to their grace: one found in time runs, one found too late is missed, whatever the policy', async () => {
    const h = cronHarness({ settings: { catchUp: 'skip' } });
    const inTime = await h.createJob.execute({ schedule: '30m', prompt: 'In time', catch_up: 'skip' });
    h.clock.advance(31 * MINUTE);
    expect((await h.runDueJobs.execute()).ran.map((run) => run.job.id)).toEqual([inTime.id]);

    const tooLate = await h.createJob.execute({ schedule: '30m', prompt: 'Too late', catch_up: 'skip' });
    h.clock.advance(40 * MINUTE);
    const report = await h.runDueJobs.execute();
    expect(report.missed.map((job) => job.id)).toEqual([tooLate.id]);
    expect(report.skipped).toEqual([]);
  });

  it('never skips a job that was due when a gateway saw it and then waited for a free run slot', async () => {
    const h = cronHarness({ settings: { catchUp: 'skip' } });
    const job = await overdueHourly(h, 30 * MINUTE);

    const claims = await h.runDueJobs.claim({ limit: 1, waitedForSlot: new Set([job.id]) });

    expect(claims.claimed.map((claimed) => claimed.job.id)).toEqual([job.id]);
    expect(claims.skipped).toEqual([]);
  });

  it('changes the policy of a job on edit, and null follows the configured one again', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Digest' });
    expect(job.catch_up).toBeNull();

    expect(await h.editJob.execute({ job: job.id, catch_up: 'skip' })).toMatchObject({ catch_up: 'skip' });
    expect(await h.editJob.execute({ job: job.id, catch_up: null })).toMatchObject({ catch_up: null });
  });
});
