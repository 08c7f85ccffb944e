import { cronExpressionFault, looksLikeCron, nextCronRun, parseCronExpression } from './cronExpression.js';
import { ERROR_CODES } from './errorCodes.js';
import { InvalidScheduleError } from './errors.js';
import { ownEntry } from './ownEntry.js';
import { formatWallClock, instantOfWallClock, toIsoUtc } from './zonedTime.js';

export type Schedule =
  | { kind: 'interval'; expr: string; display: string; minutes: number }
  | { kind: 'cron'; expr: string; display: string }
  | { kind: 'once'; expr: string; display: string; run_at: string }
  /** A job that runs only after other jobs' runs (domain/jobChains.ts): it never fires by itself. */
  | { kind: 'after'; expr: string; display: string };

/** A one-shot this far in the past is refused at creation and not run when found overdue. */
export const ONE_SHOT_GRACE_MS = 120_000;

const UNIT_MINUTES: ReadonlyArray<[RegExp, number]> = [
  // Seconds, for jobs that must come round fast (a check every 10 s): fractions of a minute.
  [/^(s|sec|secs|second|seconds)$/, 1 / 60],
  [/^(m|min|mins|minute|minutes)$/, 1],
  [/^(h|hr|hrs|hour|hours)$/, 60],
  [/^(d|day|days)$/, 1440],
];

/**
 * The cron macros other schedulers accept, as the five-field expressions they stand for (Vixie
 * cron's meanings; midnight in the configured zone). A job keeps the macro as its display and the
 * expression as what it fires by.
 */
export const CRON_MACROS: Readonly<Record<string, string>> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
};

function invalidSchedule(text: string, what: string, why: string): InvalidScheduleError {
  return new InvalidScheduleError(ERROR_CODES.SCHEDULE.INVALID, `"${text}" is not ${what}: ${why}; ${schedulesHelp()}.`);
}

/**
 * About 127,000 years: a time this far from now can still be held as a date, whose range ends
 * 8.64e15 ms after 1970. Longer would fail when the next run is computed.
 */
const LONGEST_DURATION_MS = 4e15;

/**
 * The minutes of a duration (`30m`, `2 hours`), or why it is not one: a phrase such as
 * `"x" is not a unit (s for seconds, m for minutes, h for hours, d for days)`.
 */
function durationOf(text: string): number | string {
  const match = /^([+-]?[\d.,]+)\s*([a-z]*)$/i.exec(text.trim());
  if (!match) return `"${text.trim()}" is not a number followed by a unit`;
  const [, number, unitText] = match as unknown as [string, string, string];
  const amount = Number(number);
  if (!/^\d+$/.test(number) || amount === 0) return `the number must be a whole number of 1 or more, not ${number}`;
  if (unitText === '') return 'it has no unit (s for seconds, m for minutes, h for hours, d for days)';
  const unit = UNIT_MINUTES.find(([pattern]) => pattern.test(unitText.toLowerCase()));
  if (!unit) return `"${unitText}" is not a unit (s for seconds, m for minutes, h for hours, d for days)`;
  const minutes = amount * unit[1];
  if (!Number.isSafeInteger(Math.round(minutes * 60)) || minutes * 60_000 > LONGEST_DURATION_MS) return `${number}${unitText} is too long`;
  return minutes;
}

function durationMinutes(text: string): number | null {
  const minutes = durationOf(text);
  return typeof minutes === 'number' ? minutes : null;
}

/** A delay that went wrong still reads as one (`0m`, `5x`, `1.5h`); anything else is no form at all. */
const DELAY_SHAPE = /^[+-]?\d[\d.,]*\s*[a-z]*$/i;

const ISO_PATTERN = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An ISO timestamp's instant and how it is shown: a naive time is read in `timeZone` and shown
 * there; a time with an offset (or `Z`) is shown as written (`2027-01-15T14:00:00+02:00` shows
 * as `once at 2027-01-15 14:00`), while it fires at its instant.
 */
function parseIso(text: string, timeZone: string): { at: Date; shown: string } | null {
  const match = ISO_PATTERN.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fault = wallClockFault(year, month, day, hour, minute, second);
  if (fault) throw invalidSchedule(text, 'a real date and time', fault);
  const offset = match[7];
  if (offset) {
    const at = Date.parse(`${text.replace(' ', 'T')}`);
    if (Number.isNaN(at)) throw invalidSchedule(text, 'a real date and time', `${offset} is not a UTC offset`);
    return { at: new Date(at), shown: `${match[1]}-${match[2]}-${match[3]} ${match[4]}:${match[5]}` };
  }
  const at = instantOfWallClock({ year, month, day, hour, minute, second }, timeZone);
  return { at, shown: formatWallClock(at, timeZone) };
}

/** Which part of a date and time does not exist (`2026-02 has no day 30`), or null. */
function wallClockFault(year: number, month: number, day: number, hour: number, minute: number, second: number): string | null {
  if (month < 1 || month > 12) return `there is no month ${month}`;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) return `${year}-${String(month).padStart(2, '0')} has no day ${day}`;
  if (hour > 23) return `there is no hour ${hour}`;
  if (minute > 59) return `there is no minute ${minute}`;
  if (second > 59) return `there is no second ${second}`;
  return null;
}

/** What reading a schedule depends on besides its text. */
interface ReadingContext {
  now: Date;
  /** The zone a time without an offset is read in. */
  timeZone: string;
  /** How far in the past a one-shot's time may be and still be taken. */
  graceMs: number;
}

/**
 * One way a user can write a schedule. `parseSchedule` tries the forms in the order of
 * SCHEDULE_FORMS, and every help that lists the forms (each refusal, `agent cron create`, its
 * prompt, the job tool, the dashboard) is written from the same table.
 */
export interface ScheduleForm {
  /** What the form is called in help and refusals. */
  readonly name: string;
  /** The kind of schedule it becomes: SCHEDULE_KINDS says whether that recurs and when it fires next. */
  readonly kind: Schedule['kind'];
  /**
   * How it is written, as short help shows it (each refusal, the prompt, the dashboard's form);
   * the first is the one a one-example hint gives. Each reads as this form.
   */
  readonly examples: readonly string[];
  /**
   * The fixed words it takes, where there is a list of them (the cron macros): full help (`cron
   * create --help`, the job tool) lists them all in place of the examples among them.
   */
  readonly words?: readonly string[];
  /** What a schedule of this form does, in a few words, for the job tool's help. */
  readonly help: string;
  /**
   * The schedule `text` (trimmed) stands for, or null when it is not written in this form at
   * all. Throws SCHEDULE.INVALID (SCHEDULE.PAST for a time gone by) when it is, but wrongly.
   */
  parse(text: string, context: ReadingContext): Schedule | null;
}

/**
 * The forms, in the order they are tried (docs/cron.md). The order matters where two could take
 * the same text: `every 5 * * *` has five fields, and is an interval gone wrong, not cron; `in 1
 * 2 3 4` is a cron expression gone wrong, not a delay.
 */
export const SCHEDULE_FORMS: readonly ScheduleForm[] = [
  {
    name: 'interval',
    kind: 'interval',
    examples: ['every 30m'],
    help: 'interval',
    parse(text) {
      const interval = /^every\s+(.+)$/i.exec(text);
      if (!interval) return null;
      const minutes = durationOf(interval[1]!);
      if (typeof minutes === 'string') throw invalidSchedule(text, 'a valid interval', minutes);
      const expr = `every ${interval[1]!.trim()}`;
      return { kind: 'interval', expr, display: expr, minutes };
    },
  },
  {
    name: 'cron',
    kind: 'cron',
    examples: ['0 9 * * 1-5', '@daily'],
    words: Object.keys(CRON_MACROS),
    help: 'cron: 5 fields, or a macro',
    parse(text) {
      if (/^@[a-z]+$/i.test(text)) {
        const macro = text.toLowerCase();
        const expr = ownEntry(CRON_MACROS, macro);
        if (expr === undefined) {
          throw invalidSchedule(text, 'a cron macro', `the macros are ${Object.keys(CRON_MACROS).join(', ')}`);
        }
        return { kind: 'cron', expr, display: macro };
      }
      if (!looksLikeCron(text)) return null;
      const expr = parseCronExpression(text);
      return { kind: 'cron', expr, display: expr };
    },
  },
  {
    name: 'ISO time',
    kind: 'once',
    examples: ['2027-01-15T14:00:00'],
    help: 'once, at that time',
    parse(text, { now, timeZone, graceMs }) {
      const iso = parseIso(text, timeZone);
      if (!iso) return null;
      if (now.getTime() - iso.at.getTime() > graceMs) {
        throw new InvalidScheduleError(ERROR_CODES.SCHEDULE.PAST, `"${text}" is in the past; give a future time.`);
      }
      return { kind: 'once', expr: text, display: `once at ${iso.shown}`, run_at: toIsoUtc(iso.at) };
    },
  },
  {
    name: 'delay',
    kind: 'once',
    examples: ['30m', 'in 30m'],
    help: 'once, after that delay',
    parse(text, { now }) {
      const relative = /^in\s+(.+)$/i.exec(text);
      if (relative) {
        const minutes = durationOf(relative[1]!);
        if (typeof minutes === 'string') throw invalidSchedule(text, 'a valid delay', minutes);
        const expr = `in ${relative[1]!.trim()}`;
        return { kind: 'once', expr, display: `once ${expr}`, run_at: toIsoUtc(new Date(now.getTime() + minutes * 60_000)) };
      }
      const delay = durationOf(text);
      if (typeof delay === 'number') {
        return { kind: 'once', expr: text, display: `once in ${text}`, run_at: toIsoUtc(new Date(now.getTime() + delay * 60_000)) };
      }
      if (DELAY_SHAPE.test(text)) throw invalidSchedule(text, 'a schedule', delay);
      return null;
    },
  },
];

/** Every way `form` is written that full help shows: its examples, with all of its fixed words in place of the ones among them. */
export function spellingsOf(form: ScheduleForm): string[] {
  const words = form.words ?? [];
  return [...form.examples.filter((example) => !words.includes(example)), ...words];
}

/**
 * The forms with their examples, as every message that refuses a schedule a user wrote ends:
 * `use one of: "every 30m" (interval), "0 9 * * 1-5" or "@daily" (cron), …`.
 */
export function schedulesHelp(): string {
  const forms = SCHEDULE_FORMS.map((form) => `${form.examples.map((example) => `"${example}"`).join(' or ')} (${form.name})`);
  return `use one of: ${forms.join(', ')}`;
}

/** Every spelling of every form that full help shows, quoted: `"every 30m", "0 9 * * 1-5", "@hourly", … or "in 30m"`. */
export function everyScheduleSpelling(): string {
  return quotedChoice(SCHEDULE_FORMS.flatMap(spellingsOf));
}

/** One example of each form, quoted, for a hint: `"every 30m", "0 9 * * 1-5", "2027-01-15T14:00:00" or "30m"`. */
export function scheduleHint(): string {
  return quotedChoice(SCHEDULE_FORMS.map((form) => form.examples[0]!));
}

function quotedChoice(texts: readonly string[]): string {
  const quoted = texts.map((text) => `"${text}"`);
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

/**
 * Reads a schedule written by a user, trying the forms of SCHEDULE_FORMS in their order: interval,
 * cron (a macro such as `@daily` included), ISO timestamp, relative delay (`30m`, `in 30m`).
 * Naive times are read in `timeZone`.
 * Throws SCHEDULE.INVALID saying what is wrong: with the forms listed, or for a cron
 * expression with the offending field named.
 */
export function parseSchedule(input: string, now: Date, timeZone: string, graceMs: number = ONE_SHOT_GRACE_MS): Schedule {
  const text = input.trim();
  for (const form of SCHEDULE_FORMS) {
    const schedule = form.parse(text, { now, timeZone, graceMs });
    if (schedule !== null) return schedule;
  }
  throw new InvalidScheduleError(ERROR_CODES.SCHEDULE.INVALID, `"${text}" is not a schedule; ${schedulesHelp()}.`);
}

/**
 * Whether a one-shot was written as a time without an offset (`2027-01-15T14:00`): its instant
 * depends on the zone it is read in, so a job whose zone changes reads it again.
 */
export function isZoneDependentOneShot(schedule: Schedule): boolean {
  if (schedule.kind !== 'once') return false;
  const match = ISO_PATTERN.exec(schedule.expr.trim());
  return match !== null && match[7] === undefined;
}

/** A stored schedule's fields that every kind has, read already; the rest of the record as it was stored. */
interface StoredSchedule {
  expr: string;
  display: string;
  record: Readonly<Record<string, unknown>>;
}

/** What the code after parsing needs to know of one kind of schedule. */
export interface ScheduleKind<S extends Schedule> {
  /** Whether it fires again after a run; a schedule that does not is a one-shot, completed by its run. */
  readonly recurs: boolean;
  /** Whether its next run is a time on the job's wall clock, found again when the job's zone changes. */
  readonly followsZone: boolean;
  /** When it next fires after `from`, or null when never. */
  nextRun(schedule: S, from: Date, timeZone: string): Date | null;
  /** The schedule a stored record holds, or why it cannot be used, as a phrase about the record. */
  fromRecord(stored: StoredSchedule): S | string;
}

const UNREADABLE = 'its schedule cannot be read';

/**
 * Each kind a form becomes, by name. The mapped type makes the compiler ask for every kind of the
 * `Schedule` union: a kind missing here would make every stored job of it an unreadable record.
 */
export const SCHEDULE_KINDS: { readonly [K in Schedule['kind']]: ScheduleKind<Extract<Schedule, { kind: K }>> } = {
  interval: {
    recurs: true,
    followsZone: false,
    nextRun: (schedule, from) => new Date(from.getTime() + schedule.minutes * 60_000),
    fromRecord({ expr, display, record }) {
      const minutes = typeof record.minutes === 'number' ? record.minutes : durationMinutes(expr.replace(/^every\s+/i, ''));
      return minutes && minutes > 0 ? { kind: 'interval', expr, display, minutes } : UNREADABLE;
    },
  },
  cron: {
    recurs: true,
    followsZone: true,
    nextRun: (schedule, from, timeZone) => nextCronRun(schedule.expr, from, timeZone),
    fromRecord({ expr, display }) {
      const fault = cronExpressionFault(expr);
      if (fault !== null) return `its cron expression ${JSON.stringify(expr)} is not valid: ${fault}`;
      return { kind: 'cron', expr: parseCronExpression(expr), display };
    },
  },
  once: {
    recurs: false,
    followsZone: false,
    nextRun: (schedule) => new Date(schedule.run_at),
    fromRecord({ expr, display, record }) {
      if (typeof record.run_at !== 'string' || Number.isNaN(Date.parse(record.run_at))) return UNREADABLE;
      return { kind: 'once', expr, display, run_at: record.run_at };
    },
  },
  after: {
    recurs: true,
    followsZone: false,
    nextRun: () => null,
    fromRecord: ({ expr, display }) => ({ kind: 'after', expr, display }),
  },
};

/** The entry of `schedule`'s kind, typed for it: TypeScript cannot tie the entry to the schedule by itself. */
function kindOf(schedule: Schedule): ScheduleKind<Schedule> {
  return SCHEDULE_KINDS[schedule.kind] as ScheduleKind<Schedule>;
}

export function isRecurring(schedule: Schedule): boolean {
  return kindOf(schedule).recurs;
}

/** Whether a new time zone moves the schedule's next run (cron: the same wall-clock time elsewhere). */
export function nextRunFollowsZone(schedule: Schedule): boolean {
  return kindOf(schedule).followsZone;
}

/**
 * When a schedule should next fire, counting from `from`: intervals one interval later, cron the
 * next matching wall-clock time in `timeZone` strictly after `from`, one-shots their fixed time.
 */
export function nextRunTime(schedule: Schedule, from: Date, timeZone: string): Date | null {
  return kindOf(schedule).nextRun(schedule, from, timeZone);
}

/**
 * Reads a stored schedule back, tolerating the shapes older versions wrote. When it cannot be
 * used, why, as a phrase about the record ("its schedule cannot be read").
 */
export function scheduleFromRecord(value: unknown): Schedule | string {
  if (typeof value !== 'object' || value === null) return UNREADABLE;
  const record = value as Record<string, unknown>;
  const expr = typeof record.expr === 'string' ? record.expr : null;
  const display = typeof record.display === 'string' ? record.display : expr;
  if (expr === null || display === null) return UNREADABLE;
  const kind = typeof record.kind === 'string' ? ownEntry<ScheduleKind<Schedule>>(SCHEDULE_KINDS, record.kind) : undefined;
  return kind === undefined ? UNREADABLE : kind.fromRecord({ expr, display, record });
}
