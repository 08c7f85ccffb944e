import { anHourlyJob } from '../support/jobs.js';
import { EditJob } from '../../src/application/cron/EditJob.js';
import { InMemoryJobRepository } from '../support/fakes/InMemoryJobRepository.js';
import { cronHarness } from '../support/cronHarness.js';

describe('creating a job', () => {
  it('stores a scheduled, enabled job with the defaults of its schedule form', async () => {
    const h = cronHarness();

    const job = await h.createJob.execute({ schedule: '0 9 * * 1-5', prompt: 'Plan the day' });

    expect(job).toMatchObject({
      id: '000000000001',
      name: 'Plan the day',
      schedule: { kind: 'cron', expr: '0 9 * * 1-5', display: '0 9 * * 1-5' },
      deliver: 'origin',
      state: 'scheduled',
      enabled: true,
      repeat: { times: null, completed: 0 },
      next_run_at: '2026-06-01T09:00:00Z',
      created_at: '2026-06-01T08:00:00Z',
    });
    expect((await h.listJobs.execute()).jobs).toEqual([job]);
  });

  it('writes nothing when the schedule is invalid', async () => {
    const h = cronHarness();

    await expect(h.createJob.execute({ schedule: 'every fortnight', prompt: 'x' })).rejects.toThrow(/not a valid interval/);
    expect(h.repository.writes).toBe(0);
  });

  it('refuses a delivery target that does not parse', async () => {
    const h = cronHarness();

    await expect(h.createJob.execute({ schedule: '1h', prompt: 'x', deliver: 'pigeon:roof' })).rejects.toThrow(/unknown platform "pigeon"/);
  });

  it('refuses a script outside the scripts directory', async () => {
    const h = cronHarness();

    await expect(h.createJob.execute({ schedule: '1h', prompt: 'x', script: '../etc/passwd' })).rejects.toThrow(
      /not in the scripts directory/,
    );
    expect(h.repository.writes).toBe(0);
  });
});

describe('naming a job', () => {
  it('finds a job by its name, ignoring case', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Morning Digest' });

    await expect(h.pauseJob.execute({ job: 'morning digest' })).resolves.toMatchObject({ id: job.id, state: 'paused' });
  });

  it('refuses an ambiguous name and lists the matching ids', async () => {
    // Names are unique now; a store written before that, or by hand, can still share one.
    const a = { ...anHourlyJob('00000000000a'), name: 'Digest' };
    const b = { ...anHourlyJob('00000000000b'), name: 'digest' };
    const h = cronHarness({ jobs: [a, b] });

    await expect(h.pauseJob.execute({ job: 'Digest' })).rejects.toThrow(`${a.id}, ${b.id}`);
  });

  it('reports an unknown job', async () => {
    const h = cronHarness();

    await expect(h.removeJob.execute({ job: 'nope' })).rejects.toMatchObject({ code: 'JOB.NOT_FOUND' });
  });
});

describe('pause and resume', () => {
  it('keeps a paused job from firing and resumes it from now', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });
    await h.pauseJob.execute({ job: job.id });
    h.clock.advance(5 * 3_600_000);

    expect((await h.runDueJobs.execute()).ran).toHaveLength(0);
    const resumed = await h.resumeJob.execute({ job: job.id });

    expect(resumed).toMatchObject({ state: 'scheduled', enabled: true, paused_at: null, next_run_at: '2026-06-01T14:00:00Z' });
  });

  it('refuses to resume a job that is not paused', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });

    await expect(h.resumeJob.execute({ job: job.id })).rejects.toThrow(/only a paused job can be resumed/);
  });

  it('makes a one-shot whose time has passed due at once when resumed, and the next tick runs it', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '10m', prompt: 'x' });
    await h.pauseJob.execute({ job: job.id });
    h.clock.advance(60 * 60_000);

    const resumed = await h.resumeJob.execute({ job: job.id });
    expect(resumed).toMatchObject({ state: 'scheduled', enabled: true, next_run_at: '2026-06-01T09:00:00Z' });
    const report = await h.runDueJobs.execute();

    expect(report.ran.map((run) => run.job.id)).toEqual([job.id]);
    expect(h.repository.get(job.id)).toMatchObject({ state: 'completed', repeat: { completed: 1 } });
  });

  it('runs a one-shot resumed after its time at the next tick even when that tick comes more than 120 s later', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '10m', prompt: 'x' });
    await h.pauseJob.execute({ job: job.id });
    h.clock.advance(60 * 60_000);
    await h.resumeJob.execute({ job: job.id });
    h.clock.advance(10 * 60_000);

    const report = await h.runDueJobs.execute();

    expect(report.missed).toEqual([]);
    expect(report.ran.map((run) => run.job.id)).toEqual([job.id]);
    expect(h.agent.requests).toHaveLength(1);
    expect(h.repository.get(job.id)).toMatchObject({
      state: 'completed',
      enabled: false,
      next_run_at: null,
      last_status: 'ok',
      last_error: null,
      repeat: { completed: 1 },
    });
    expect((await h.runDueJobs.execute()).ran).toHaveLength(0);
    expect(h.agent.requests).toHaveLength(1);
  });

  it('delivers a one-shot paused by blocked_config once the configuration is fixed and it is resumed, however late the next tick', async () => {
    const h = cronHarness();
    h.agent.configured = false;
    const job = await h.createJob.execute({ schedule: '10m', prompt: 'x' });
    h.clock.advance(10 * 60_000);
    await h.runDueJobs.execute();
    expect(h.repository.get(job.id)).toMatchObject({ state: 'paused', last_status: 'blocked_config', repeat: { completed: 0 } });
    expect(h.repository.get(job.id)?.paused_reason).toMatch(/^its run was refused: /);

    h.agent.configured = true;
    h.clock.advance(60 * 60_000);
    await h.resumeJob.execute({ job: job.id });
    h.clock.advance(10 * 60_000);
    const report = await h.runDueJobs.execute();

    expect(report.missed).toEqual([]);
    expect(h.agent.requests).toHaveLength(1);
    expect(h.repository.get(job.id)).toMatchObject({ state: 'completed', last_status: 'ok', repeat: { completed: 1 } });
  });

  it('keeps a pause reason, updates it when a paused job is paused again with another, and refuses one too long', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });

    await h.pauseJob.execute({ job: job.id, reason: '  Waiting for the new API key  ' });
    const pausedAt = h.repository.get(job.id)?.paused_at;
    expect(h.repository.get(job.id)).toMatchObject({ state: 'paused', paused_reason: 'Waiting for the new API key' });
    h.clock.advance(60_000);
    await h.pauseJob.execute({ job: job.id });
    expect(h.repository.get(job.id)?.paused_reason).toBe('Waiting for the new API key');
    await h.pauseJob.execute({ job: job.id, reason: 'Key arrives Friday' });
    expect(h.repository.get(job.id)).toMatchObject({ paused_reason: 'Key arrives Friday', paused_at: pausedAt });
    await expect(h.pauseJob.execute({ job: job.id, reason: 'x'.repeat(501) })).rejects.toThrow(
      'The pause reason is 501 characters long; keep it to 500 or fewer.',
    );
  });

  it('still judges a one-shot resumed before its time missed when no tick runs it within 120 s of that time', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '10m', prompt: 'x' });
    await h.pauseJob.execute({ job: job.id });
    await h.resumeJob.execute({ job: job.id });
    h.clock.advance(10 * 60_000 + 121_000);

    const report = await h.runDueJobs.execute();

    expect(report.ran).toHaveLength(0);
    expect(h.repository.get(job.id)!.last_error).toMatch(/^missed:/);
  });

  it('runs a one-shot found late within cron.one_shot_grace_seconds, judges it missed beyond, and takes a past time within it', async () => {
    const h = cronHarness({ settings: { oneShotGraceMs: 600_000 } });
    const late = await h.createJob.execute({ schedule: '10m', prompt: 'late' });
    const tooLate = await h.createJob.execute({ schedule: '5m', prompt: 'too late' });
    h.clock.advance(15 * 60_000 + 1000);

    const report = await h.runDueJobs.execute();

    expect(report.ran.map((run) => run.job.id)).toEqual([late.id]);
    expect(h.repository.get(tooLate.id)!.last_error).toMatch(/^missed:/);
    const pastTime = new Date(h.clock.now().getTime() - 300_000).toISOString().slice(0, 19);
    await expect(h.createJob.execute({ schedule: `${pastTime}Z`, prompt: 'five minutes ago' })).resolves.toMatchObject({
      state: 'scheduled',
    });
    await expect(
      cronHarness({ now: h.clock.now().toISOString() }).createJob.execute({ schedule: `${pastTime}Z`, prompt: 'five minutes ago' }),
    ).rejects.toThrow(/is in the past/);
  });

  it('still judges a one-shot that was never paused missed when found 121 s after its time', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '10m', prompt: 'x' });
    h.clock.advance(10 * 60_000 + 121_000);

    const report = await h.runDueJobs.execute();

    expect(report.ran).toHaveLength(0);
    expect(h.agent.requests).toHaveLength(0);
    expect(report.missed.map((missed) => missed.id)).toEqual([job.id]);
    expect(h.repository.get(job.id)).toMatchObject({ state: 'completed', enabled: false, last_status: 'error', repeat: { completed: 0 } });
    expect(h.repository.get(job.id)!.last_error).toMatch(/^missed:/);
  });

  it('lets a run in progress finish but keeps the job paused', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });
    h.clock.advance(3_600_000);
    h.agent.reply(async () => {
      await h.pauseJob.execute({ job: job.id });
      return 'done';
    });

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({ state: 'paused', last_status: 'ok', repeat: { completed: 1 } });
  });
});

describe('editing a job', () => {
  it('changes only the given fields and reschedules on a new schedule', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', skills: ['a'], name: 'Job' });

    const edited = await h.editJob.execute({ job: 'Job', schedule: 'every 2h', skills: [] });

    expect(edited).toMatchObject({ id: job.id, prompt: 'x', name: 'Job', skills: [], next_run_at: '2026-06-01T10:00:00Z' });
  });

  it('clears the script', async () => {
    const h = cronHarness();
    h.scripts.scripts['a.sh'] = {};
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', script: 'a.sh' });

    await expect(h.editJob.execute({ job: job.id, script: null })).resolves.toMatchObject({ script: null });
  });
});

describe('running a job now', () => {
  it('runs it in this process, counts the run and keeps its schedule', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });

    const { report, job: after } = await h.runJobNow.execute({ job: job.id });

    expect(report.outcome).toEqual({ status: 'ok' });
    expect(after).toMatchObject({ state: 'scheduled', repeat: { completed: 1 }, next_run_at: job.next_run_at, claim: null });
  });

  it('refuses a paused job', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });
    await h.pauseJob.execute({ job: job.id });

    await expect(h.runJobNow.execute({ job: job.id })).rejects.toThrow(/paused and cannot be run now; resume it first/);
    expect(h.agent.requests).toHaveLength(0);
  });

  it('uses the due slot of an overdue recurring job, so the next tick does not run it again', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });
    h.clock.advance(90 * 60_000);

    const { job: after } = await h.runJobNow.execute({ job: job.id });
    const tick = await h.runDueJobs.execute();

    expect(after).toMatchObject({ state: 'scheduled', repeat: { completed: 1 }, next_run_at: '2026-06-01T10:30:00Z' });
    expect(tick.ran).toEqual([]);
    expect(h.agent.requests).toHaveLength(1);
  });

  it('refuses a one-shot before its time, saying when it is due and that the run would use it up', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '2h', prompt: 'x', name: 'Stretch' });
    const before = await h.listJobs.execute();

    await expect(h.runJobNow.execute({ job: job.id })).rejects.toThrow(
      expect.objectContaining({
        code: 'JOB.NOT_DUE',
        message:
          "Job 'Stretch' is a one-shot due at 2026-06-01 10:00 (UTC), and running it now would use it up; give --force to run it anyway.",
      }) as unknown as Error,
    );
    expect(h.agent.requests).toHaveLength(0);
    expect(await h.listJobs.execute()).toEqual(before);
  });

  it('completes a one-shot run early when forced', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '2h', prompt: 'x' });

    const { job: after } = await h.runJobNow.execute({ job: job.id, force: true });

    expect(after).toMatchObject({ state: 'completed', enabled: false });
    await expect(h.runJobNow.execute({ job: job.id, force: true })).rejects.toThrow(/completed/);
  });

  it('runs a one-shot that is due without being forced', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '2h', prompt: 'x' });
    h.clock.advance(2 * 60 * 60_000);

    await expect(h.runJobNow.execute({ job: job.id })).resolves.toMatchObject({ job: { state: 'completed' } });
  });
});

describe('removing a job', () => {
  it('deletes the record and its output files', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x' });
    await h.runJobNow.execute({ job: job.id });
    expect(h.outputs.files.has(job.id)).toBe(true);

    await h.removeJob.execute({ job: job.id });

    expect((await h.listJobs.execute()).jobs).toEqual([]);
    expect(h.outputs.files.has(job.id)).toBe(false);
  });
});

describe('the next scheduled run', () => {
  it('is the earliest next_run_at among scheduled, enabled jobs', async () => {
    const h = cronHarness();
    const { NextScheduledRun } = await import('../../src/application/cron/NextScheduledRun.js');
    const next = new NextScheduledRun(h.repository);
    expect(await next.execute()).toBeNull();
    await h.createJob.execute({ schedule: 'every 2h', prompt: 'later' });
    const soon = await h.createJob.execute({ schedule: 'every 1h', prompt: 'sooner' });
    await h.createJob.execute({ schedule: 'every 10m', prompt: 'paused' }).then((job) => h.pauseJob.execute({ job: job.id }));

    expect((await next.execute())?.toISOString()).toBe(new Date(soon.next_run_at!).toISOString());
  });
});

describe('a stored record that cannot be read', () => {
  const damaged = { index: 1, id: 'bad000000001', reason: 'its next_run_at "soon" is not a date and time' };

  it('is named with what is wrong with it when a command names it', async () => {
    const h = cronHarness();
    const repository = new InMemoryJobRepository([], [damaged]);
    const edit = new EditJob(repository, h.clock, h.scripts, h.settings, h.workdirs);

    await expect(edit.execute({ job: 'bad000000001', prompt: 'y' })).rejects.toThrow(
      /record of job bad000000001 cannot be read \(its next_run_at "soon" is not a date and time\)/,
    );
  });
});
