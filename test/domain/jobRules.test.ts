import { JOB_STATES, type Job } from '../../src/domain/Job.js';
import { dueTime, isDue } from '../../src/domain/jobLifecycle.js';
import { readJobRecord, readJobRecords, recordOfJob } from '../../src/domain/JobRecord.js';
import { LAST_STATUSES, isFailedStatus } from '../../src/domain/RunOutcome.js';
import { anHourlyJob } from '../support/jobs.js';

const NOW = new Date('2026-03-01T13:00:00Z');
const job = (fields: Partial<Job>): Job => ({ ...anHourlyJob('a1'), ...fields });

describe('when a job is due', () => {
  it('is due once its next run has come, to the millisecond, while it is scheduled and enabled', () => {
    expect(dueTime(job({ next_run_at: '2026-03-01T13:00:00Z' }))).toBe(NOW.getTime());
    expect(isDue(job({ next_run_at: '2026-03-01T13:00:00Z' }), NOW)).toBe(true);
    expect(isDue(job({ next_run_at: '2026-03-01T12:59:59.999Z' }), NOW)).toBe(true);
    expect(isDue(job({ next_run_at: '2026-03-01T13:00:00.001Z' }), NOW)).toBe(false);
    expect(isDue(job({ next_run_at: '2026-03-01T14:00:00+01:00' }), NOW)).toBe(true);
  });

  it.each([
    ['paused', { state: 'paused' }],
    ['completed', { state: 'completed' }],
    ['running', { state: 'running' }],
    ['disabled', { enabled: false }],
    ['without a next run', { next_run_at: null }],
    ['with a next run that is no time', { next_run_at: 'soon' }],
  ] as Array<[string, Partial<Job>]>)('waits for no run while %s', (_, fields) => {
    const waiting = job({ next_run_at: '2026-03-01T12:00:00Z', ...fields });
    expect(dueTime(waiting)).toBeNull();
    expect(isDue(waiting, NOW)).toBe(false);
  });

  it('knows every state a job can be in, in the order they are shown', () => {
    expect(JOB_STATES).toEqual(['scheduled', 'paused', 'running', 'completed']);
  });
});

describe('reading the records of a job store', () => {
  const readable = { ...recordOfJob(anHourlyJob('b2')), extra: 'kept' };

  it('reads each record as readJobRecord does, keeping each readable one as found and marking the others', () => {
    const reading = readJobRecords(['not a job', readable, { id: 'c3' }]);
    const b2 = (readJobRecord(readable, 1) as { ok: true; job: Job }).job;
    expect(reading.jobs).toEqual([b2]);
    expect(reading.readings).toEqual([null, b2, null]);
    expect(reading.recordsById).toEqual(new Map([['b2', readable]]));
    expect(reading.unreadable).toEqual([
      { index: 0, id: null, reason: 'it is not an object' },
      { index: 2, id: 'c3', reason: 'it has no prompt' },
    ]);
  });

  it("reports an unreadable record by the id it is stored under, when the store keeps one (a row's key)", () => {
    const reading = readJobRecords(['not a job', readable, { id: 'c3' }], ['row-1', 'b2', 'row-3']);
    expect(reading.unreadable.map((problem) => problem.id)).toEqual(['row-1', 'row-3']);
    expect(reading.jobs.map((each) => each.id)).toEqual(['b2']);
  });
});

describe('which runs failed', () => {
  it('counts an error, a refused run and a failed delivery as failed, and nothing else', () => {
    expect([...LAST_STATUSES, null].filter(isFailedStatus)).toEqual(['error', 'delivery_failed', 'blocked_config']);
  });
});
