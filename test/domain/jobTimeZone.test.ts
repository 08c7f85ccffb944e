import { InvalidScheduleError } from '../../src/domain/errors.js';
import { createJob, editJob, jobTimeZone, validateJobTimeZone, type Job } from '../../src/domain/Job.js';
import { claimFiredSlot, claimForManualRun, claimJob, pauseJob, resumeJob } from '../../src/domain/jobLifecycle.js';
import { readJobRecord } from '../../src/domain/JobRecord.js';
import { upcomingRuns } from '../../src/domain/jobDetails.js';
import { parseSchedule } from '../../src/domain/Schedule.js';

/*
 * The configured zone is Europe/Berlin, the job's own America/New_York. In 2026 New York springs
 * forward on 8 March and falls back on 1 November; Berlin on 29 March and 25 October. Between
 * those dates only one of the two has changed, so a slot read in the wrong zone lands elsewhere.
 */
const CONFIGURED = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';

function aJob(schedule: string, now: string, timezone: string | null = NEW_YORK): Job {
  const at = new Date(now);
  return createJob(
    { id: 'a1b2c3d4e5f6', prompt: 'Report', schedule: parseSchedule(schedule, at, timezone ?? CONFIGURED), timezone },
    at,
    CONFIGURED,
  );
}

/** The next run after each tick's claim at the slot before, as the scheduler would go on. */
function slotsAfterClaims(job: Job, count: number): string[] {
  const slots = [job.next_run_at!];
  let current = job;
  while (slots.length < count) {
    current = claimJob(current, 'host:1', new Date(current.next_run_at!), CONFIGURED);
    slots.push(current.next_run_at!);
  }
  return slots;
}

describe("a job's own time zone", () => {
  describe('when New York springs forward (8 March) and Berlin has not yet (29 March)', () => {
    it('fires a daily 09:00 at 09:00 in New York on both sides of the change, not at 09:00 in Berlin', () => {
      const job = aJob('0 9 * * *', '2026-03-06T20:00:00Z');

      expect(slotsAfterClaims(job, 3)).toEqual([
        '2026-03-07T14:00:00Z', // 09:00 EST
        '2026-03-08T13:00:00Z', // 09:00 EDT
        '2026-03-09T13:00:00Z',
      ]);
      // The same job in the configured zone, for contrast: 09:00 CET.
      expect(aJob('0 9 * * *', '2026-03-06T20:00:00Z', null).next_run_at).toBe('2026-03-07T08:00:00Z');
    });

    it("fires a time inside New York's gap at the first instant after it, though Berlin has no gap that night", () => {
      const job = aJob('30 2 * * *', '2026-03-07T12:00:00Z');

      expect(slotsAfterClaims(job, 2)).toEqual([
        '2026-03-08T07:00:00Z', // 03:00 EDT, the first instant after the gap
        '2026-03-09T06:30:00Z', // 02:30 EDT
      ]);
    });

    it('lists the coming runs in its zone, whatever zone the caller configured', () => {
      const job = aJob('0 9 * * *', '2026-03-06T20:00:00Z');

      expect(upcomingRuns(job, 3, CONFIGURED).map((at) => at.toISOString())).toEqual([
        '2026-03-07T14:00:00.000Z',
        '2026-03-08T13:00:00.000Z',
        '2026-03-09T13:00:00.000Z',
      ]);
    });
  });

  describe('when Berlin falls back (25 October) and New York has not yet (1 November)', () => {
    it('fires a daily 09:00 at 09:00 in New York on both sides of each change', () => {
      const job = aJob('0 9 * * *', '2026-10-24T12:00:00Z');

      expect(slotsAfterClaims(job, 2)).toEqual([
        '2026-10-24T13:00:00Z', // 09:00 EDT; Berlin still on summer time
        '2026-10-25T13:00:00Z', // 09:00 EDT; Berlin back on CET, which would give 08:00Z
      ]);
      const week = aJob('0 9 * * *', '2026-10-30T20:00:00Z');
      expect(slotsAfterClaims(week, 3)).toEqual([
        '2026-10-31T13:00:00Z', // 09:00 EDT
        '2026-11-01T14:00:00Z', // 09:00 EST
        '2026-11-02T14:00:00Z',
      ]);
    });

    it("fires a time New York's clock shows twice only once, at its first occurrence", () => {
      const job = aJob('30 1 * * *', '2026-10-31T12:00:00Z');

      expect(slotsAfterClaims(job, 2)).toEqual([
        '2026-11-01T05:30:00Z', // 01:30 EDT
        '2026-11-02T06:30:00Z', // 01:30 EST the next day; the second 01:30 of 1 November is skipped
      ]);
    });
  });

  it('reads a one-shot time without an offset in the zone it is given, and fires it there', () => {
    const at = new Date('2026-03-10T12:00:00Z');
    const schedule = parseSchedule('2026-03-20T09:00', at, NEW_YORK);
    const job = createJob({ id: 'a1b2c3d4e5f6', prompt: 'Once', schedule, timezone: NEW_YORK }, at, CONFIGURED);

    expect(job).toMatchObject({ timezone: NEW_YORK, next_run_at: '2026-03-20T13:00:00Z' });
  });

  it('leaves an interval alone: its slots are the same in every zone', () => {
    const job = aJob('every 2h', '2026-03-08T05:00:00Z');

    expect(slotsAfterClaims(job, 3)).toEqual(['2026-03-08T07:00:00Z', '2026-03-08T09:00:00Z', '2026-03-08T11:00:00Z']);
    expect(editJob(job, { timezone: 'Asia/Tokyo' }, new Date('2026-03-08T06:00:00Z'), CONFIGURED).next_run_at).toBe(job.next_run_at);
  });

  it('counts the next run again in the new zone when an edit changes it, and in the configured zone when it is taken away', () => {
    const job = aJob('0 9 * * *', '2026-03-10T14:00:00Z');
    expect(job.next_run_at).toBe('2026-03-11T13:00:00Z');
    const now = new Date('2026-03-10T14:30:00Z');

    const inTokyo = editJob(job, { timezone: 'Asia/Tokyo' }, now, CONFIGURED);
    expect(inTokyo).toMatchObject({ timezone: 'Asia/Tokyo', next_run_at: '2026-03-11T00:00:00Z' });
    const configured = editJob(inTokyo, { timezone: null }, now, CONFIGURED);
    expect(configured).toMatchObject({ timezone: null, next_run_at: '2026-03-11T08:00:00Z' });
  });

  it('is the zone of every other rule that counts a next run: resume, a run asked for by hand, a fired slot', () => {
    const job = aJob('0 9 * * *', '2026-03-06T20:00:00Z');
    const later = new Date('2026-03-08T12:00:00Z');

    expect(resumeJob(pauseJob(job, later), later, CONFIGURED).next_run_at).toBe('2026-03-08T13:00:00Z');
    const due = { ...job, next_run_at: '2026-03-07T14:00:00Z' };
    expect(claimForManualRun(due, 'host:1', later, CONFIGURED).next_run_at).toBe('2026-03-08T13:00:00Z');
    expect(claimFiredSlot(due, 'host:1', new Date('2026-03-07T14:00:00Z'), new Date('2026-03-07T14:00:00Z'), CONFIGURED).next_run_at).toBe(
      '2026-03-08T13:00:00Z',
    );
  });

  it('refuses an unknown zone in one sentence saying where the names are listed', () => {
    expect(() => validateJobTimeZone('Mars/Base')).toThrow(InvalidScheduleError);
    expect(() => validateJobTimeZone('Mars/Base')).toThrow(
      /^Unknown time zone "Mars\/Base"; use an IANA name such as Europe\/Berlin or America\/New_York \(`timedatectl list-timezones` lists them/,
    );
    expect(() => aJob('0 9 * * *', '2026-03-06T20:00:00Z', 'Mars/Base')).toThrow('Unknown time zone "Mars/Base"');
  });

  it('takes a name in any case as the tz database spells it, and an empty one as the configured zone', () => {
    expect(validateJobTimeZone(' america/new_york ')).toBe(NEW_YORK);
    expect(validateJobTimeZone('')).toBeNull();
    expect(validateJobTimeZone(null)).toBeNull();
    expect(jobTimeZone({ timezone: null }, CONFIGURED)).toBe(CONFIGURED);
    expect(jobTimeZone({}, CONFIGURED)).toBe(CONFIGURED);
  });

  describe('in a stored record', () => {
    const base = { id: 'abc123abc123', prompt: 'p', schedule: { kind: 'cron', expr: '0 9 * * *', display: '0 9 * * *' } };

    it('is the configured zone when a record from before it existed has none', () => {
      const reading = readJobRecord(base, 0);
      expect(reading.ok && reading.job.timezone).toBeNull();
      const kept = readJobRecord({ ...base, timezone: NEW_YORK }, 0);
      expect(kept.ok && kept.job.timezone).toBe(NEW_YORK);
    });

    it('makes the record unreadable, saying why, when this system does not know it', () => {
      expect(readJobRecord({ ...base, timezone: 'Mars/Base' }, 2)).toEqual({
        ok: false,
        problem: { index: 2, id: 'abc123abc123', reason: 'its timezone "Mars/Base" is not a time zone this system knows' },
      });
    });
  });
});
