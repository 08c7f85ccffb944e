import { parseSchedule, nextRunTime } from '../../src/domain/Schedule.js';

const now = new Date('2026-03-01T12:00:00Z');

describe('parseSchedule', () => {
  it('reads an interval', () => {
    expect(parseSchedule('every 2h', now, 'UTC')).toEqual({ kind: 'interval', expr: 'every 2h', display: 'every 2h', minutes: 120 });
  });

  it('ORs day-of-month and day-of-week like standard cron', () => {
    const schedule = parseSchedule('0 9 1 * 1', now, 'UTC');
    const runs: string[] = [];
    let from = now;
    for (let i = 0; i < 4; i += 1) {
      from = nextRunTime(schedule, from, 'UTC')!;
      runs.push(from.toISOString());
    }
    // 2026-03-01 is a Sunday: Monday the 2nd, Monday the 9th, 16th, 23rd
    expect(runs).toEqual([
      '2026-03-02T09:00:00.000Z',
      '2026-03-09T09:00:00.000Z',
      '2026-03-16T09:00:00.000Z',
      '2026-03-23T09:00:00.000Z',
    ]);
  });
});
