import { nextRunTime, parseSchedule, type Schedule } from '../../src/domain/Schedule.js';

const now = new Date('2026-03-01T12:00:00Z');

function runs(schedule: Schedule, from: Date, timeZone: string, count: number): string[] {
  const result: string[] = [];
  let cursor = from;
  for (let i = 0; i < count; i += 1) {
    cursor = nextRunTime(schedule, cursor, timeZone)!;
    result.push(cursor.toISOString());
  }
  return result;
}

describe('reading a schedule', () => {
  it.each([
    ['every 30m', { kind: 'interval', minutes: 30 }],
    ['every 2 hours', { kind: 'interval', minutes: 120 }],
    ['every 1d', { kind: 'interval', minutes: 1440 }],
    ['  0 9 * * 1-5 ', { kind: 'cron', expr: '0 9 * * 1-5' }],
    ['2026-03-02T14:00:00', { kind: 'once', run_at: '2026-03-02T14:00:00Z', display: 'once at 2026-03-02 14:00' }],
    ['2026-03-02T14:00:00+02:00', { kind: 'once', run_at: '2026-03-02T12:00:00Z' }],
    ['30m', { kind: 'once', run_at: '2026-03-01T12:30:00Z', display: 'once in 30m' }],
    ['2 hrs', { kind: 'once', run_at: '2026-03-01T14:00:00Z' }],
    ['1 day', { kind: 'once', run_at: '2026-03-02T12:00:00Z' }],
  ])('reads %j', (input, expected) => {
    expect(parseSchedule(input, now, 'UTC')).toMatchObject(expected);
  });

  it('reads a naive ISO time in the configured zone', () => {
    expect(parseSchedule('2026-03-02T14:00:00', now, 'America/New_York')).toMatchObject({
      run_at: '2026-03-02T19:00:00Z',
    });
  });

  it.each(['tomorrow', 'every', 'every 0m', '5x', '0m', '-3h', 'every 5 fortnights', '1.5h'])(
    'rejects %j and lists the four forms',
    (input) => {
      expect(() => parseSchedule(input, now, 'UTC')).toThrow(/not a (valid interval|schedule)/);
    },
  );

  it.each([
    ['61 * * * *', /minute field "61" has 61, which is out of range/],
    ['0 24 * * *', /hour field "24" has 24, which is out of range/],
    ['0 9 0 * *', /day-of-month field "0"/],
    ['0 9 * 13 *', /month field "13"/],
    ['0 9 * * 8', /day-of-week field "8"/],
    ['0 9 * * MON-FOO', /day-of-week field "MON-FOO" has "FOO"/],
    ['*/0 * * * *', /step "0"/],
    ['0 9 5-1 * *', /whose start is after its end/],
  ])('names the offending field of %j', (input, message) => {
    expect(() => parseSchedule(input, now, 'UTC')).toThrow(message);
  });

  it('rejects a one-shot more than 120 s in the past', () => {
    expect(() => parseSchedule('2026-03-01T11:57:00', now, 'UTC')).toThrow(/in the past/);
    expect(parseSchedule('2026-03-01T11:59:00', now, 'UTC')).toMatchObject({ kind: 'once' });
  });

  it('rejects a date that does not exist', () => {
    expect(() => parseSchedule('2026-02-30T10:00:00', now, 'UTC')).toThrow(/not a real date/);
  });
});

describe('cron next runs', () => {
  it('ORs day-of-month and day-of-week when both are restricted (Vixie)', () => {
    const schedule = parseSchedule('0 9 1 * 1', now, 'UTC');
    // 2026-03-01 is a Sunday; Mondays and the 1st of April both match.
    expect(runs(schedule, now, 'UTC', 6)).toEqual([
      '2026-03-02T09:00:00.000Z',
      '2026-03-09T09:00:00.000Z',
      '2026-03-16T09:00:00.000Z',
      '2026-03-23T09:00:00.000Z',
      '2026-03-30T09:00:00.000Z',
      '2026-04-01T09:00:00.000Z',
    ]);
  });

  it('uses only day-of-week when day-of-month is *', () => {
    expect(runs(parseSchedule('30 8 * * SAT,0', now, 'UTC'), now, 'UTC', 3)).toEqual([
      '2026-03-07T08:30:00.000Z',
      '2026-03-08T08:30:00.000Z',
      '2026-03-14T08:30:00.000Z',
    ]);
  });

  it('treats 7 as Sunday and accepts month names, lists and steps', () => {
    expect(runs(parseSchedule('0 */6 * JAN,MAR 7', now, 'UTC'), now, 'UTC', 3)).toEqual([
      '2026-03-01T12:00:00.000Z'.replace('12:00', '18:00'),
      '2026-03-08T00:00:00.000Z',
      '2026-03-08T06:00:00.000Z',
    ]);
  });

  it('reads the expression in the configured time zone', () => {
    expect(runs(parseSchedule('0 9 * * *', now, 'Asia/Tokyo'), now, 'Asia/Tokyo', 2)).toEqual([
      '2026-03-02T00:00:00.000Z',
      '2026-03-03T00:00:00.000Z',
    ]);
  });

  describe('across DST (America/New_York)', () => {
    const zone = 'America/New_York';

    it('fires a time inside the spring-forward gap at the first instant after it', () => {
      // 2026-03-08: 02:00 EST jumps to 03:00 EDT.
      const from = new Date('2026-03-07T12:00:00Z');
      expect(runs(parseSchedule('30 2 * * *', from, zone), from, zone, 3)).toEqual([
        '2026-03-08T07:00:00.000Z', // 03:00 EDT, the first instant after the gap
        '2026-03-09T06:30:00.000Z', // 02:30 EDT
        '2026-03-10T06:30:00.000Z',
      ]);
    });

    it('fires a time that happens twice only once, at its first occurrence', () => {
      // 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:30 happens twice.
      const from = new Date('2026-10-31T12:00:00Z');
      expect(runs(parseSchedule('30 1 * * *', from, zone), from, zone, 2)).toEqual([
        '2026-11-01T05:30:00.000Z', // 01:30 EDT
        '2026-11-02T06:30:00.000Z', // 01:30 EST the next day
      ]);
    });

    it('does not repeat wildcard minutes in the repeated hour', () => {
      const from = new Date('2026-11-01T05:50:00Z'); // 01:50 EDT
      expect(runs(parseSchedule('0,30 * * * *', from, zone), from, zone, 2)).toEqual([
        '2026-11-01T07:00:00.000Z', // 02:00 EST; the second 01:00 and 01:30 are skipped
        '2026-11-01T07:30:00.000Z',
      ]);
    });

    it('fires every-minute jobs in the gap once, after it', () => {
      const from = new Date('2026-03-08T06:59:00Z'); // 01:59 EST
      expect(runs(parseSchedule('* * * * *', from, zone), from, zone, 2)).toEqual([
        '2026-03-08T07:00:00.000Z',
        '2026-03-08T07:01:00.000Z',
      ]);
    });
  });

  it('reads a naive ISO time inside a gap as the first instant after the gap', () => {
    const from = new Date('2026-03-01T00:00:00Z');
    expect(parseSchedule('2026-03-08T02:30:00', from, 'America/New_York')).toMatchObject({
      run_at: '2026-03-08T07:00:00Z',
    });
  });

  it('intervals count from the given instant', () => {
    expect(nextRunTime(parseSchedule('every 45m', now, 'UTC'), now, 'UTC')!.toISOString()).toBe('2026-03-01T12:45:00.000Z');
  });
});
