import { InvalidScheduleError } from '../../src/domain/errors.js';
import {
  CRON_MACROS,
  everyScheduleSpelling,
  isRecurring,
  nextRunFollowsZone,
  nextRunTime,
  parseSchedule,
  SCHEDULE_FORMS,
  SCHEDULE_KINDS,
  scheduleFromRecord,
  scheduleHint,
  schedulesHelp,
  spellingsOf,
} from '../../src/domain/Schedule.js';

/** Before every example's time, so that the ISO example is still to come. */
const now = new Date('2026-03-01T12:00:00Z');
const context = { now, timeZone: 'UTC', graceMs: 120_000 };

const everySpelling = SCHEDULE_FORMS.flatMap((form) => spellingsOf(form).map((spelling) => [form.name, spelling] as const));

describe('the schedule forms table', () => {
  it.each(everySpelling)('the %s form reads its own example %j, and parseSchedule reads it the same', (name, spelling) => {
    const form = SCHEDULE_FORMS.find((each) => each.name === name)!;

    const schedule = form.parse(spelling, context);

    expect(schedule).toMatchObject({ kind: form.kind });
    expect(parseSchedule(spelling, now, 'UTC')).toEqual(schedule);
  });

  it.each(everySpelling)('no form tried before the %s form takes %j', (name, spelling) => {
    const earlier = SCHEDULE_FORMS.slice(
      0,
      SCHEDULE_FORMS.findIndex((form) => form.name === name),
    );

    for (const form of earlier) expect(form.parse(spelling, context)).toBeNull();
  });

  it('lists every cron macro among the spellings of the cron form', () => {
    expect(spellingsOf(SCHEDULE_FORMS.find((form) => form.kind === 'cron')!)).toEqual(['0 9 * * 1-5', ...Object.keys(CRON_MACROS)]);
  });

  it.each(everySpelling)('reads the %s schedule %j back from its record, and finds its next run', (_name, spelling) => {
    const schedule = parseSchedule(spelling, now, 'UTC');

    expect(scheduleFromRecord(JSON.parse(JSON.stringify(schedule)))).toEqual(schedule);
    expect(nextRunTime(schedule, now, 'UTC')!.getTime()).toBeGreaterThan(now.getTime());
  });

  it('says for each kind whether it recurs and whether a new zone moves its next run', () => {
    const kinds = Object.fromEntries(
      SCHEDULE_FORMS.map((form) => {
        const schedule = parseSchedule(form.examples[0]!, now, 'UTC');
        return [form.kind, { recurs: isRecurring(schedule), followsZone: nextRunFollowsZone(schedule) }];
      }),
    );

    expect(kinds).toEqual({
      interval: { recurs: true, followsZone: false },
      cron: { recurs: true, followsZone: true },
      once: { recurs: false, followsZone: false },
    });
    // `after` is no form a user writes: a job that runs only after other jobs (domain/jobChains.ts) has it.
    expect(Object.keys(SCHEDULE_KINDS).sort()).toEqual([...Object.keys(kinds), 'after'].sort());
    expect(SCHEDULE_KINDS.after.nextRun({ kind: 'after', expr: 'after', display: 'only after other jobs' }, now, 'UTC')).toBeNull();
  });

  it('names every form with its examples in the sentence a refusal ends with', () => {
    expect(schedulesHelp()).toBe(
      'use one of: "every 30m" (interval), "0 9 * * 1-5" or "@daily" (cron), "2027-01-15T14:00:00" (ISO time), "30m" or "in 30m" (delay)',
    );
    let refusal: unknown;
    try {
      parseSchedule('next tuesday', now, 'UTC');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(InvalidScheduleError);
    for (const form of SCHEDULE_FORMS) {
      expect((refusal as Error).message).toContain(`(${form.name})`);
      for (const example of form.examples) expect((refusal as Error).message).toContain(`"${example}"`);
    }
  });

  it('gives every spelling of every form for full help, and one example of each for a hint', () => {
    for (const [, spelling] of everySpelling) expect(everyScheduleSpelling()).toContain(`"${spelling}"`);
    expect(scheduleHint()).toBe(
      SCHEDULE_FORMS.map((form) => `"${form.examples[0]}"`)
        .join(', ')
        .replace(/, (?=[^,]*$)/, ' or '),
    );
  });
});
