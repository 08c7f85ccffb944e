import { InvalidScheduleError } from '../../src/domain/errors.js';
import { nextRunTime, parseSchedule, scheduleFromRecord, type Schedule } from '../../src/domain/Schedule.js';
import { describeSchedule } from '../../src/domain/scheduleWords.js';

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

  it.each([
    ['@hourly', '0 * * * *'],
    ['@daily', '0 0 * * *'],
    ['@midnight', '0 0 * * *'],
    ['@weekly', '0 0 * * 0'],
    ['@monthly', '0 0 1 * *'],
    ['@yearly', '0 0 1 1 *'],
    ['@annually', '0 0 1 1 *'],
  ])('reads the cron macro %s as "%s", keeping the macro as its display', (macro, expr) => {
    expect(parseSchedule(` ${macro.toUpperCase()} `, now, 'UTC')).toEqual({ kind: 'cron', expr, display: macro });
  });

  it('fires a macro at midnight of the configured zone, like its expression', () => {
    const weekly = parseSchedule('@weekly', now, 'Europe/Berlin');

    expect(runs(weekly, now, 'Europe/Berlin', 2)).toEqual(['2026-03-07T23:00:00.000Z', '2026-03-14T23:00:00.000Z']);
  });

  it('reads a stored macro back with its display', () => {
    expect(scheduleFromRecord({ kind: 'cron', expr: '0 0 * * *', display: '@daily' })).toEqual({
      kind: 'cron',
      expr: '0 0 * * *',
      display: '@daily',
    });
  });

  it.each([
    ['in 30m', '2026-03-01T12:30:00Z', 'once in 30m'],
    ['in 45 min', '2026-03-01T12:45:00Z', 'once in 45 min'],
    ['IN 2 hours', '2026-03-01T14:00:00Z', 'once in 2 hours'],
    ['in  1d', '2026-03-02T12:00:00Z', 'once in 1d'],
    ['in 3 days', '2026-03-04T12:00:00Z', 'once in 3 days'],
  ])('reads the relative delay %j', (input, runAt, display) => {
    expect(parseSchedule(input, now, 'UTC')).toMatchObject({ kind: 'once', run_at: runAt, display });
  });

  it('reads a naive ISO time in the configured zone', () => {
    expect(parseSchedule('2026-03-02T14:00:00', now, 'America/New_York')).toMatchObject({
      run_at: '2026-03-02T19:00:00Z',
    });
  });

  it.each([
    ['UTC', '2027-01-15T14:00:00', '2027-01-15T14:00:00Z'],
    ['UTC', '2027-01-15T14:00:00+02:00', '2027-01-15T12:00:00Z'],
    ['Europe/Berlin', '2027-01-15T14:00:00', '2027-01-15T13:00:00Z'],
    ['Europe/Berlin', '2027-01-15T14:00:00+02:00', '2027-01-15T12:00:00Z'],
    ['America/New_York', '2027-01-15T14:00:00Z', '2027-01-15T14:00:00Z'],
  ])('shows an ISO time in %s as written, %s as "once at 2027-01-15 14:00", and fires at its instant', (zone, input, runAt) => {
    expect(parseSchedule(input, now, zone)).toEqual({ kind: 'once', expr: input, display: 'once at 2027-01-15 14:00', run_at: runAt });
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

  it.each([
    ['*/61 * * * *', 'minute field "*/61" has step 61, which is not between 1 and 60; use numbers 0-59'],
    ['0 */25 * * *', 'hour field "*/25" has step 25, which is not between 1 and 24; use numbers 0-23'],
    ['0 0 */32 * *', 'day-of-month field "*/32" has step 32, which is not between 1 and 31; use numbers 1-31'],
    ['0 0 * */13 *', 'month field "*/13" has step 13, which is not between 1 and 12; use numbers 1-12 or names'],
    ['0 0 * * 1-5/9', 'day-of-week field "1-5/9" has step 9, which is not between 1 and 7; use numbers 0-7 or names'],
    ['0 0 * * */8', 'day-of-week field "*/8" has step 8, which is not between 1 and 7'],
  ])('refuses %j, whose step is larger than its field, naming the field and its range', (input, message) => {
    expect(() => parseSchedule(input, now, 'UTC')).toThrow(message);
  });

  it.each(['*/60 * * * *', '0 */24 * * *', '0 0 */31 * *', '0 0 * */12 *', '0 0 * * 0-7/7'])(
    'accepts %j, whose step is as large as its field allows',
    (input) => {
      expect(nextRunTime(parseSchedule(input, now, 'UTC'), now, 'UTC')).toBeInstanceOf(Date);
    },
  );

  it("answers every cron-like input with its own sentence or a next run, never with the cron library's error", () => {
    const tokens = [
      '*',
      '*/0',
      '*/1',
      '*/7',
      '*/8',
      '*/12',
      '*/13',
      '*/24',
      '*/25',
      '*/31',
      '*/32',
      '*/60',
      '*/61',
      '0',
      '1',
      '7',
      '8',
      '12',
      '13',
      '23',
      '24',
      '31',
      '32',
      '59',
      '60',
      '01',
      '1-5',
      '5-1',
      '1-5/2',
      '1-5/9',
      '0-7',
      '0-7/8',
      '5/15',
      '*/5/2',
      '1-2-3',
      '*-5',
      '-',
      '1,',
      ',1',
      ',',
      '+1',
      '1.5',
      'L',
      'W',
      '15W',
      'LW',
      '5L',
      '1#2',
      '?',
      'JAN',
      'jan',
      'MON',
      'sun',
      'MON-FRI',
      'SUN-SAT',
      'FRI-MON',
      'jan-mar/2',
      'JAN/2',
      'MONDAY',
      'JANMAR',
      '1-JAN',
      'H',
      '@daily',
    ];
    const answers: string[] = [];
    for (let position = 0; position < 5; position += 1) {
      for (const token of tokens) {
        const fields = ['0', '0', '*', '*', '*'];
        fields[position] = token;
        const input = fields.join(' ');
        try {
          answers.push(`${input} → ${nextRunTime(parseSchedule(input, now, 'UTC'), now, 'UTC')?.toISOString() ?? 'never'}`);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidScheduleError);
          const message = (error as Error).message;
          expect(message).not.toMatch(/CronPattern|croner/i);
          expect(message).toMatch(/^(Cron (minute|hour|day-of-month|month|day-of-week) field "|".*" is not a schedule)/);
        }
      }
    }
    expect(answers.length).toBeGreaterThan(50);
  });

  it.each(['0 0 9 * * 1', '0 0 9 * * 1 2027', '0 9 * *', '@daily 9', '0 9 * * 1 extra words here'])(
    'refuses %j, which does not have five fields, with the four forms',
    (input) => {
      expect(() => parseSchedule(input, now, 'UTC')).toThrow(`"${input}" is not a schedule; use one of`);
    },
  );

  it('rejects a one-shot more than 120 s in the past', () => {
    expect(() => parseSchedule('2026-03-01T11:57:00', now, 'UTC')).toThrow(/in the past/);
    expect(parseSchedule('2026-03-01T11:59:00', now, 'UTC')).toMatchObject({ kind: 'once' });
  });

  it('rejects a date that does not exist', () => {
    expect(() => parseSchedule('2026-02-30T10:00:00', now, 'UTC')).toThrow(/not a real date/);
  });
});

describe('refusing a schedule the user typed', () => {
  const FOUR_FORMS =
    '; use one of: "every 30m" (interval), "0 9 * * 1-5" or "@daily" (cron), "2027-01-15T14:00:00" (ISO time), "30m" or "in 30m" (delay).';

  it.each([
    ['@reboot', '"@reboot" is not a cron macro: the macros are @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually'],
    ['in 5x', '"in 5x" is not a valid delay: "x" is not a unit (s for seconds, m for minutes, h for hours, d for days)'],
    ['in 0m', '"in 0m" is not a valid delay: the number must be a whole number of 1 or more, not 0'],
    ['in a while', '"in a while" is not a valid delay: "a while" is not a number followed by a unit'],
    ['every 0m', '"every 0m" is not a valid interval: the number must be a whole number of 1 or more, not 0'],
    ['every 5x', '"every 5x" is not a valid interval: "x" is not a unit (s for seconds, m for minutes, h for hours, d for days)'],
    ['every 30', '"every 30" is not a valid interval: it has no unit (s for seconds, m for minutes, h for hours, d for days)'],
    ['every 1.5h', '"every 1.5h" is not a valid interval: the number must be a whole number of 1 or more, not 1.5'],
    ['every -2h', '"every -2h" is not a valid interval: the number must be a whole number of 1 or more, not -2'],
    [
      'every 5 fortnights',
      '"every 5 fortnights" is not a valid interval: "fortnights" is not a unit (s for seconds, m for minutes, h for hours, d for days)',
    ],
    ['every fortnight', '"every fortnight" is not a valid interval: "fortnight" is not a number followed by a unit'],
    ['every 99999999999999m', '"every 99999999999999m" is not a valid interval: 99999999999999m is too long'],
    ['0m', '"0m" is not a schedule: the number must be a whole number of 1 or more, not 0'],
    ['5x', '"5x" is not a schedule: "x" is not a unit (s for seconds, m for minutes, h for hours, d for days)'],
    ['30', '"30" is not a schedule: it has no unit (s for seconds, m for minutes, h for hours, d for days)'],
    ['-3h', '"-3h" is not a schedule: the number must be a whole number of 1 or more, not -3'],
    ['99999999999d', '"99999999999d" is not a schedule: 99999999999d is too long'],
    ['2026-02-30T10:00:00', '"2026-02-30T10:00:00" is not a real date and time: 2026-02 has no day 30'],
    ['2027-02-29T10:00', '"2027-02-29T10:00" is not a real date and time: 2027-02 has no day 29'],
    ['2026-13-01T10:00', '"2026-13-01T10:00" is not a real date and time: there is no month 13'],
    ['2026-03-02T24:00', '"2026-03-02T24:00" is not a real date and time: there is no hour 24'],
    ['2026-03-02T14:60', '"2026-03-02T14:60" is not a real date and time: there is no minute 60'],
    ['2026-03-02T14:00:60', '"2026-03-02T14:00:60" is not a real date and time: there is no second 60'],
    ['2026-03-02T14:00:00+25:00', '"2026-03-02T14:00:00+25:00" is not a real date and time: +25:00 is not a UTC offset'],
    ['next tuesday', '"next tuesday" is not a schedule'],
  ])('says what is wrong with %j and lists the four forms', (input, problem) => {
    expect(() => parseSchedule(input, now, 'UTC')).toThrow(
      expect.objectContaining({ code: 'SCHEDULE.INVALID', message: `${problem}${FOUR_FORMS}` }),
    );
  });

  it('still reads a leap day and a time with seconds', () => {
    expect(parseSchedule('2028-02-29T10:00:59', now, 'UTC')).toMatchObject({ run_at: '2028-02-29T10:00:59Z' });
  });
});

/**
 * A brute-force Vixie cron, for checking next runs against: each field is a set of values, and a
 * day matches on day-of-month OR day-of-week when both fields are restricted, but on both (an
 * AND) when either field starts with "*".
 */
function vixieRuns(expression: string, from: Date, count: number): string[] {
  const names: Record<string, number> = {
    JAN: 1,
    FEB: 2,
    MAR: 3,
    APR: 4,
    MAY: 5,
    JUN: 6,
    JUL: 7,
    AUG: 8,
    SEP: 9,
    OCT: 10,
    NOV: 11,
    DEC: 12,
    SUN: 0,
    MON: 1,
    TUE: 2,
    WED: 3,
    THU: 4,
    FRI: 5,
    SAT: 6,
  };
  const value = (token: string) => names[token.toUpperCase()] ?? Number(token);
  const set = (field: string, min: number, max: number): Set<number> => {
    const values = new Set<number>();
    for (const item of field.split(',')) {
      const [range, step = '1'] = item.split('/') as [string, string?];
      const [low, high] =
        range === '*' ? [min, max] : range.includes('-') ? range.split('-').map(value) : [value(range), step === '1' ? value(range) : max];
      for (let v = low!; v <= high!; v += Number(step)) values.add(v);
    }
    return values;
  };
  const [minute, hour, dayOfMonth, month, dayOfWeek] = expression.split(' ') as [string, string, string, string, string];
  const minutes = set(minute, 0, 59);
  const hours = set(hour, 0, 23);
  const monthDays = set(dayOfMonth, 1, 31);
  const months = set(month, 1, 12);
  const weekDays = new Set([...set(dayOfWeek, 0, 7)].map((day) => day % 7));
  const both = dayOfMonth.startsWith('*') || dayOfWeek.startsWith('*');
  const result: string[] = [];
  const firstDay = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate());
  for (let day = firstDay; result.length < count; day += 86_400_000) {
    const date = new Date(day);
    if (!months.has(date.getUTCMonth() + 1)) continue;
    const onMonthDay = monthDays.has(date.getUTCDate());
    const onWeekDay = weekDays.has(date.getUTCDay());
    if (!(both ? onMonthDay && onWeekDay : onMonthDay || onWeekDay)) continue;
    for (const h of [...hours].sort((a, b) => a - b)) {
      for (const m of [...minutes].sort((a, b) => a - b)) {
        const at = day + (h * 60 + m) * 60_000;
        if (at > from.getTime() && result.length < count) result.push(new Date(at).toISOString());
      }
    }
  }
  return result;
}

describe('cron day-of-month and day-of-week (Vixie)', () => {
  const from = new Date('2026-01-01T00:00:00Z');

  it('fires "0 0 */2 * 1" on Mondays that are odd days, not on every odd day', () => {
    expect(runs(parseSchedule('0 0 */2 * 1', from, 'UTC'), from, 'UTC', 4)).toEqual([
      '2026-01-05T00:00:00.000Z',
      '2026-01-19T00:00:00.000Z',
      '2026-02-09T00:00:00.000Z',
      '2026-02-23T00:00:00.000Z',
    ]);
  });

  it.each([
    '0 0 */2 * 1',
    '0 9 1 * 1',
    '0 9 * * 1',
    '0 9 1 * *',
    '0 9 * * *',
    '0 0 * * */2',
    '0 0 */10 * MON-FRI',
    '0 12 15 * */3',
    '30 6 1-7 * 1',
    '0 0 1-31/2 * 1',
    '0 0 1,15 FEB 0',
    '0 0 */1 * 5',
    '0 0 13 * 5',
    '15 */6 31 * *',
    '0 0 29 2 *',
    '0 8 */7 * 7',
  ])('gives the runs of %j that Vixie cron gives', (expression) => {
    expect(runs(parseSchedule(expression, from, 'UTC'), from, 'UTC', 12)).toEqual(vixieRuns(expression, from, 12));
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
      expect(runs(parseSchedule('* * * * *', from, zone), from, zone, 2)).toEqual(['2026-03-08T07:00:00.000Z', '2026-03-08T07:01:00.000Z']);
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

describe('intervals in seconds', () => {
  it('reads every 10s, counts its slots ten seconds apart and says it in words', () => {
    const now = new Date('2026-06-01T08:00:00Z');
    const schedule = parseSchedule('every 10s', now, 'UTC');

    expect(schedule).toMatchObject({ kind: 'interval', expr: 'every 10s' });
    expect(nextRunTime(schedule, now, 'UTC')).toEqual(new Date('2026-06-01T08:00:10Z'));
    expect(describeSchedule(schedule, 'UTC')).toBe('every 10 seconds');
    expect(describeSchedule(parseSchedule('every 1s', now, 'UTC'), 'UTC')).toBe('every second');
  });
});
