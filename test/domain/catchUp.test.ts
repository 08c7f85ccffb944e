import { createJob, editJob, type Job } from '../../src/domain/Job.js';
import {
  OVERDUE_MIN_LATENESS_MS,
  catchUpOf,
  isOverdueSlot,
  skipOverdueSlot,
  skipsOverdueSlot,
  slotsMissed,
} from '../../src/domain/jobCatchUp.js';
import { readJobRecord, storedRecordOf } from '../../src/domain/JobRecord.js';
import { parseSchedule } from '../../src/domain/Schedule.js';

const CREATED = new Date('2026-06-01T08:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function hourly(overrides: Partial<Job> = {}): Job {
  const job = createJob({ id: 'a1b2c3d4e5f6', prompt: 'Digest', schedule: parseSchedule('every 1h', CREATED, 'UTC') }, CREATED, 'UTC');
  return { ...job, ...overrides };
}

const at = (ms: number) => new Date(CREATED.getTime() + ms);

describe('the catch-up policy of an overdue recurring slot', () => {
  it('follows the configured policy unless the job has its own', () => {
    expect(catchUpOf(hourly())).toBe('once');
    expect(catchUpOf(hourly(), 'skip')).toBe('skip');
    expect(catchUpOf(hourly({ catch_up: 'once' }), 'skip')).toBe('once');
    expect(catchUpOf(hourly({ catch_up: 'skip' }), 'once')).toBe('skip');
  });

  it('judges a slot overdue by the missed-run grace of one-shots (120 s), not when the tick merely came round', () => {
    const job = hourly(); // due at 09:00
    expect(isOverdueSlot(job, at(HOUR + 5_000))).toBe(false);
    expect(isOverdueSlot(job, at(HOUR + 120_000))).toBe(false);
    expect(isOverdueSlot(job, at(HOUR + 120_001))).toBe(true);
    expect(isOverdueSlot(job, at(3.5 * HOUR))).toBe(true);
    // A longer grace moves the threshold with it.
    expect(isOverdueSlot(job, at(HOUR + 5 * MINUTE), 10 * MINUTE)).toBe(false);
  });

  it('never judges a slot overdue by less than a minute late, even with a grace of 0', () => {
    const job = hourly();
    expect(isOverdueSlot(job, at(HOUR + 30_000), 0)).toBe(false);
    expect(isOverdueSlot(job, at(HOUR + OVERDUE_MIN_LATENESS_MS), 0)).toBe(false);
    expect(isOverdueSlot(job, at(HOUR + OVERDUE_MIN_LATENESS_MS + 1), 0)).toBe(true);
  });

  it('leaves one-shots to the missed rule', () => {
    const oneShot = createJob(
      { id: 'b1b2c3d4e5f6', prompt: 'Once', schedule: parseSchedule('30m', CREATED, 'UTC'), catch_up: 'skip' },
      CREATED,
      'UTC',
    );
    expect(isOverdueSlot(oneShot, at(5 * HOUR))).toBe(false);
    expect(skipsOverdueSlot(oneShot, at(5 * HOUR), 'skip')).toBe(false);
  });

  it('skips only with the policy skip', () => {
    const late = at(3.5 * HOUR);
    expect(skipsOverdueSlot(hourly(), late, 'once')).toBe(false);
    expect(skipsOverdueSlot(hourly(), late, 'skip')).toBe(true);
    expect(skipsOverdueSlot(hourly({ catch_up: 'skip' }), late)).toBe(true);
    expect(skipsOverdueSlot(hourly({ catch_up: 'once' }), late, 'skip')).toBe(false);
  });

  it('moves a skipped job to its next slot from now, and changes nothing else', () => {
    const job = hourly({ catch_up: 'skip', last_status: 'ok', repeat: { times: 5, completed: 2 } });
    const skipped = skipOverdueSlot(job, at(3.5 * HOUR), 'UTC');

    expect(skipped).toEqual({ ...job, next_run_at: '2026-06-01T12:30:00Z' });
  });

  it('counts the slots that fell between the skipped one and now, that one included', () => {
    const schedule = parseSchedule('0 * * * *', CREATED, 'UTC');
    expect(slotsMissed(schedule, at(HOUR), at(HOUR + 3 * MINUTE), 'UTC')).toBe(1);
    expect(slotsMissed(schedule, at(HOUR), at(3.5 * HOUR), 'UTC')).toBe(3);
    expect(slotsMissed(parseSchedule('every 1m', CREATED, 'UTC'), at(0), at(30 * 24 * HOUR), 'UTC', 50)).toBe(50);
  });
});

describe('a job that runs without the agent', () => {
  const schedule = parseSchedule('every 1h', CREATED, 'UTC');

  it('needs a script, and no prompt; it is named after its script when it has neither name nor prompt', () => {
    expect(() => createJob({ id: 'c1', prompt: 'x', schedule, no_agent: true }, CREATED, 'UTC')).toThrow(/no pre-run script/);
    const job = createJob({ id: 'c1', prompt: '', schedule, script: 'disk.sh', no_agent: true }, CREATED, 'UTC');
    expect(job).toMatchObject({ no_agent: true, script: 'disk.sh', name: 'disk.sh', prompt: '' });
  });

  it('refuses an edit that removes its script, or gives the agent back without a prompt', () => {
    const job = createJob({ id: 'c1', prompt: '', schedule, script: 'disk.sh', no_agent: true }, CREATED, 'UTC');
    expect(() => editJob(job, { script: null }, CREATED, 'UTC')).toThrow(/no pre-run script/);
    expect(() => editJob(job, { no_agent: false }, CREATED, 'UTC')).toThrow(/no prompt/);
    expect(editJob(job, { no_agent: false, prompt: 'Report the disks' }, CREATED, 'UTC')).toMatchObject({
      no_agent: false,
      prompt: 'Report the disks',
    });
  });

  it('keeps both new fields in its record, and reads a record without them as the defaults', () => {
    const job = createJob({ id: 'c1', prompt: 'Digest', schedule, script: 'disk.sh', no_agent: true, catch_up: 'skip' }, CREATED, 'UTC');
    const record = storedRecordOf(job, undefined);
    expect(record).toMatchObject({ no_agent: true, catch_up: 'skip' });
    expect(readJobRecord(JSON.parse(JSON.stringify(record)), 0)).toEqual({ ok: true, job });

    const { no_agent: _noAgent, catch_up: _catchUp, ...older } = record;
    expect(readJobRecord(older, 0)).toMatchObject({ ok: true, job: { no_agent: false, catch_up: null } });
  });
});
