import { FireJobSlot } from '../../src/application/cron/FireJobSlot.js';
import { cronHarness } from '../support/cronHarness.js';

/*
 * The configured zone is Europe/Berlin; the jobs here live in New York, which springs forward on
 * 8 March 2026, three weeks before Berlin does.
 */
const settle = async () => {
  for (let i = 0; i < 10; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

function harness(now = '2026-03-06T20:00:00Z') {
  return cronHarness({ now, settings: { timeZone: 'Europe/Berlin' } });
}

describe('a job in a time zone of its own', () => {
  it('runs at 09:00 New York time across its DST change, its report named and dated there', async () => {
    const h = harness();
    const job = await h.createJob.execute({ schedule: '0 9 * * *', prompt: 'Morning brief', timezone: 'America/New_York' });
    expect(job).toMatchObject({ timezone: 'America/New_York', next_run_at: '2026-03-07T14:00:00Z' });

    h.clock.set(new Date('2026-03-07T14:00:00Z'));
    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'ok', next_run_at: '2026-03-08T13:00:00Z' });
    const [report] = h.outputs.files.get(job.id)!;
    expect(report!.name).toBe('2026-03-07_09-00-00.md');
    expect(report!.content).toContain('- Run at: 2026-03-07 09:00 (America/New_York)');
    const { runs, timeZone } = await h.listJobRuns.execute({ job: job.id, limit: 5 });
    expect(timeZone).toBe('America/New_York');
    expect(runs.map((run) => run.startedAt?.toISOString())).toEqual(['2026-03-07T14:00:00.000Z']);
  });

  it('is shown in its zone, the configured one beside it', async () => {
    const h = harness();
    const job = await h.createJob.execute({ schedule: '0 9 * * *', prompt: 'Morning brief', timezone: 'America/New_York' });

    const shown = await h.showJob.execute({ job: job.id });

    expect(shown).toMatchObject({ timeZone: 'America/New_York', configuredTimeZone: 'Europe/Berlin' });
    expect(shown.nextRuns.slice(0, 2).map((at) => at.toISOString())).toEqual(['2026-03-07T14:00:00.000Z', '2026-03-08T13:00:00.000Z']);
  });

  it('is armed for its next slot in its zone after a trigger provider fired the one before', async () => {
    const h = harness('2026-03-07T13:59:00Z');
    const fire = new FireJobSlot(h.repository, h.clock, h.identity, h.settings, h.dispatchDueJobs, h.log);
    const job = await h.createJob.execute({ schedule: '0 9 * * *', prompt: 'Morning brief', timezone: 'America/New_York' });

    h.clock.set(new Date(job.next_run_at!));
    expect(await fire.execute({ jobId: job.id, fireAt: job.next_run_at! })).toEqual({ status: 'accepted', jobId: job.id });
    await settle();

    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'ok', next_run_at: '2026-03-08T13:00:00Z' });
  });

  it('reads a one-shot time without an offset in its zone, and again in a new zone an edit gives it', async () => {
    const h = harness();
    const job = await h.createJob.execute({ schedule: '2026-03-20T09:00', prompt: 'Call Ada', timezone: 'America/New_York' });
    expect(job).toMatchObject({
      schedule: { run_at: '2026-03-20T13:00:00Z', display: 'once at 2026-03-20 09:00' },
      next_run_at: '2026-03-20T13:00:00Z',
    });

    const inBerlin = await h.editJob.execute({ job: job.id, timezone: null });
    expect(inBerlin).toMatchObject({ timezone: null, schedule: { run_at: '2026-03-20T08:00:00Z' }, next_run_at: '2026-03-20T08:00:00Z' });
    // A time with an offset is the same instant in any zone.
    const fixed = await h.createJob.execute({ schedule: '2026-03-20T09:00:00Z', prompt: 'Call Bea' });
    const moved = await h.editJob.execute({ job: fixed.id, timezone: 'Asia/Tokyo' });
    expect(moved).toMatchObject({ timezone: 'Asia/Tokyo', next_run_at: '2026-03-20T09:00:00Z' });
  });

  it("reads a new schedule in the job's zone when an edit gives only the schedule", async () => {
    const h = harness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check', timezone: 'America/New_York' });

    const edited = await h.editJob.execute({ job: job.id, schedule: '30 2 * * *' });

    // 02:30 does not exist in New York on 8 March: the first instant after the gap.
    expect(edited).toMatchObject({ timezone: 'America/New_York', next_run_at: '2026-03-07T07:30:00Z' });
    h.clock.set(new Date('2026-03-07T07:30:00Z'));
    await h.runDueJobs.execute();
    expect(h.repository.get(job.id)!.next_run_at).toBe('2026-03-08T07:00:00Z');
  });

  it('refuses an unknown zone, on create and on edit, and writes nothing', async () => {
    const h = harness();
    const job = await h.createJob.execute({ schedule: '0 9 * * *', prompt: 'Morning brief' });
    const writes = h.repository.writes;

    await expect(h.createJob.execute({ schedule: '0 9 * * *', prompt: 'x', timezone: 'Mars/Base' })).rejects.toThrow(
      /^Unknown time zone "Mars\/Base"; use an IANA name/,
    );
    await expect(h.editJob.execute({ job: job.id, timezone: 'Mars/Base' })).rejects.toMatchObject({ code: 'TIMEZONE.INVALID' });

    expect(h.repository.writes).toBe(writes);
    expect(h.repository.get(job.id)).toEqual(job);
  });
});
