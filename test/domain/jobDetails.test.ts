import { createJob, type Job } from '../../src/domain/Job.js';
import { compactTargets, describeRepeat, describeTargets, upcomingRuns } from '../../src/domain/jobDetails.js';
import { parseRunReport, renderRunReport, runReportFileName, runReportHeadline } from '../../src/domain/RunReport.js';
import { parseSchedule } from '../../src/domain/Schedule.js';
import { describeSchedule } from '../../src/domain/scheduleWords.js';

const NOW = new Date('2026-06-01T08:00:00Z');

function aJob(schedule: string, overrides: Partial<Job> = {}, timeZone = 'UTC'): Job {
  return {
    ...createJob({ id: 'a1b2c3d4e5f6', prompt: 'Plan the day', schedule: parseSchedule(schedule, NOW, timeZone) }, NOW, timeZone),
    ...overrides,
  };
}

describe('a schedule in words', () => {
  it.each([
    ['every 30m', 'every 30 minutes'],
    ['every 2h', 'every 2 hours'],
    ['every 1d', 'every day'],
    ['every 90m', 'every 90 minutes'],
    ['0 9 * * 1-5', 'at 09:00 on Monday through Friday'],
    ['0 9 * * MON-FRI', 'at 09:00 on Monday through Friday'],
    ['30 8,17 * * *', 'at 08:30 and 17:30'],
    ['*/15 * * * *', 'every 15 minutes'],
    ['* * * * *', 'every minute'],
    ['5 * * * *', 'at minute 5 of every hour'],
    ['0 */2 * * *', 'at minute 0 of every 2nd hour'],
    ['*/10 9-17 * * 1-5', 'every 10 minutes from 09:00 to 17:59 on Monday through Friday'],
    ['0 9 1 * *', 'at 09:00 on day 1 of the month'],
    ['0 9 1,15 * *', 'at 09:00 on day 1 and 15 of the month'],
    ['0 9 1 * 1', 'at 09:00 on day 1 of the month or on Monday'],
    ['0 0 */2 * 1', 'at 00:00 on day */2 of the month and on Monday'],
    ['0 0 * * 0,6', 'at 00:00 on Sunday and Saturday'],
    ['0 0 * * 7', 'at 00:00 on Sunday'],
    ['0 12 25 DEC *', 'at 12:00 on day 25 of the month in December'],
    ['0 0 1 1-3 *', 'at 00:00 on day 1 of the month in January through March'],
    ['0-30/10 * * * *', 'at minute 0-30/10 of hour *'],
  ])('%s → %s', (schedule, words) => {
    expect(describeSchedule(parseSchedule(schedule, NOW, 'UTC'), 'UTC')).toBe(words);
  });

  it('gives a one-shot its time in the zone asked for', () => {
    expect(describeSchedule(parseSchedule('2026-06-02T14:00', NOW, 'Europe/Berlin'), 'Europe/Berlin')).toBe('once, at 2026-06-02 14:00');
  });
});

describe('the next runs of a job', () => {
  it('lists the next five slots of a cron job in the configured zone, from its next run on', () => {
    const job = aJob('0 9 * * 1-5', {}, 'Europe/Berlin');

    expect(upcomingRuns(job, 5, 'Europe/Berlin').map((run) => run.toISOString())).toEqual([
      '2026-06-02T07:00:00.000Z',
      '2026-06-03T07:00:00.000Z',
      '2026-06-04T07:00:00.000Z',
      '2026-06-05T07:00:00.000Z',
      '2026-06-08T07:00:00.000Z',
    ]);
  });

  it('steps an interval job by its interval', () => {
    expect(upcomingRuns(aJob('every 2h'), 3, 'UTC').map((run) => run.toISOString())).toEqual([
      '2026-06-01T10:00:00.000Z',
      '2026-06-01T12:00:00.000Z',
      '2026-06-01T14:00:00.000Z',
    ]);
  });

  it('stops where the repeat count runs out, counting a run in progress', () => {
    expect(upcomingRuns(aJob('every 1h', { repeat: { times: 5, completed: 3 } }), 5, 'UTC')).toHaveLength(2);
    expect(upcomingRuns(aJob('every 1h', { state: 'running', repeat: { times: 5, completed: 3 } }), 5, 'UTC')).toHaveLength(1);
  });

  it('gives a one-shot its one time, and none once it runs', () => {
    expect(upcomingRuns(aJob('30m'), 5, 'UTC').map((run) => run.toISOString())).toEqual(['2026-06-01T08:30:00.000Z']);
    expect(upcomingRuns(aJob('30m', { state: 'running' }), 5, 'UTC')).toEqual([]);
  });

  it('gives none for a paused job or a completed one', () => {
    expect(upcomingRuns(aJob('30m', { state: 'paused', enabled: false }), 5, 'UTC')).toEqual([]);
    expect(upcomingRuns(aJob('every 1h', { state: 'paused', enabled: false }), 5, 'UTC')).toEqual([]);
    expect(upcomingRuns(aJob('every 1h', { state: 'completed', enabled: false, next_run_at: null }), 5, 'UTC')).toEqual([]);
  });
});

describe('a job in words', () => {
  it('says the repeat count as runs of a limit, or no limit', () => {
    expect(describeRepeat({ times: 5, completed: 2 })).toBe('2 of 5 runs');
    expect(describeRepeat({ times: 1, completed: 0 })).toBe('0 of 1 run');
    expect(describeRepeat({ times: null, completed: 1 })).toBe('no limit (1 run so far)');
  });

  it.each([
    ['local', null, 'the output file only (local)'],
    ['telegram:-100123', null, 'telegram chat -100123 (telegram:-100123)'],
    ['telegram:-100123:17', null, 'telegram chat -100123, thread 17 (telegram:-100123:17)'],
    ['slack', null, 'the slack home channel (slack)'],
    ['all', null, 'the home channel of every configured platform (all)'],
    ['origin', null, 'the chat it was created in; created on the command line, so the output file only (origin)'],
    ['origin', { platform: 'telegram', chat_id: '42' }, 'the chat it was created in: telegram chat 42 (origin)'],
    ['local,discord:123', null, 'the output file only (local); discord chat 123 (discord:123)'],
  ])('describes %s', (deliver, origin, words) => {
    expect(describeTargets({ deliver, origin })).toBe(words);
  });

  it('shows a target that no longer parses as it is stored, saying why', () => {
    expect(describeTargets({ deliver: 'pigeon:roof', origin: null })).toMatch(
      /^"pigeon:roof", which cannot be delivered to: .*unknown platform "pigeon"/,
    );
    expect(compactTargets('pigeon:roof')).toBe('pigeon:roof');
  });

  it('gives the compact form of the targets for tables', () => {
    expect(compactTargets('Telegram:-100123')).toBe('telegram:-100123');
    expect(compactTargets('local, slack:#ops')).toBe('local,slack:#ops');
    expect(compactTargets('origin')).toBe('origin');
  });
});

describe('reading a run report back', () => {
  const job = {
    id: 'a1b2c3d4e5f6',
    name: 'Digest',
    prompt: 'Summarise.\n\n## Response\n\nin two lines',
    schedule: parseSchedule('every 1h', NOW, 'UTC'),
  };
  const startedAt = new Date('2026-06-01T09:00:05Z');

  function report(
    input: { status: string; response?: string | null; error?: string | null; queuedReceipts?: string[]; deliveryError?: string },
    timeZone = 'Europe/Berlin',
  ) {
    return { name: runReportFileName(startedAt, timeZone), content: renderRunReport({ job, startedAt, timeZone, ...input }) };
  }

  it('gives the status, the run time to the second and the answer, even when the prompt holds a Response heading', () => {
    const { name, content } = report({ status: 'ok', response: 'All quiet.\nNothing to do.' });

    const parsed = parseRunReport(name, content, 'UTC', job.prompt);

    expect(parsed).toEqual({ startedAt, status: 'ok', response: 'All quiet.\nNothing to do.', error: null });
    expect(runReportHeadline(parsed)).toBe('All quiet.');
  });

  it('gives the error, and the answer too when there is one', () => {
    const { name, content } = report({ status: 'error', error: 'idle timeout after 600 s', response: null });
    expect(parseRunReport(name, content, 'UTC', job.prompt)).toMatchObject({
      status: 'error',
      error: 'idle timeout after 600 s',
      response: null,
    });

    const both = report({ status: 'error', error: 'agent produced an empty response', response: '' });
    expect(parseRunReport(both.name, both.content, 'UTC', job.prompt)).toMatchObject({
      error: 'agent produced an empty response',
      response: '',
    });
  });

  it('reads the status and the answer of a run whose delivery was queued or failed', () => {
    const queued = report({ status: 'delivery_queued', response: 'Sent on.', queuedReceipts: ['r1', 'r2'] });
    const failed = report({
      status: 'delivery_failed',
      response: 'Sent on.',
      queuedReceipts: ['r1'],
      deliveryError: 'telegram:1: refused\nslack:#x: down',
    });

    expect(queued.content).toContain('- Status: delivery_queued\n- Delivery outcome: queued\n- Queued receipts: r1, r2\n');
    expect(failed.content).toContain(
      '- Delivery outcome: failed\n- Delivery error: telegram:1: refused; slack:#x: down\n- Queued receipts: r1\n',
    );
    for (const { name, content } of [queued, failed]) {
      expect(parseRunReport(name, content, 'UTC', job.prompt)).toMatchObject({ response: 'Sent on.', error: null });
    }
  });

  it('finds the sections after a prompt that has been edited since, when that prompt held no heading', () => {
    const plain = { ...job, prompt: 'Summarise the inbox.' };
    const content = renderRunReport({ job: plain, startedAt, timeZone: 'UTC', status: 'error', error: 'run failed: boom' });
    expect(parseRunReport('r.md', content, 'UTC', 'A newer prompt')).toMatchObject({ error: 'run failed: boom', response: null });
  });

  it('reads the wall clock of the file name in the zone the report names, not the fallback zone', () => {
    const { name, content } = report({ status: 'ok', response: 'x' }, 'America/New_York');
    expect(parseRunReport(name, content, 'Asia/Tokyo').startedAt).toEqual(startedAt);
  });

  it('tolerates a report of an older version: no status line, another file name', () => {
    const old =
      '# Cron job: Digest\n\n- Job id: a1b2c3d4e5f6\n- Run at: 2026-06-01 11:00 (Europe/Berlin)\n\n## Prompt\n\nSummarise.\n\n## Response\n\nDone.\n';
    expect(parseRunReport('report.md', old, 'UTC')).toEqual({
      startedAt: new Date('2026-06-01T09:00:00Z'),
      status: null,
      response: 'Done.',
      error: null,
    });
    expect(parseRunReport('x.md', 'not a report at all', 'UTC')).toEqual({ startedAt: null, status: null, response: null, error: null });
  });
});
