import { looksLikeCron, nextCronRun, parseCronExpression } from './cronExpression.js';
import { ERROR_CODES } from './errorCodes.js';
import { InvalidScheduleError } from './errors.js';
import { formatWallClock, instantOfWallClock, toIsoUtc } from './zonedTime.js';

export type Schedule =
  | { kind: 'interval'; expr: string; display: string; minutes: number }
  | { kind: 'cron'; expr: string; display: string }
  | { kind: 'once'; expr: string; display: string; run_at: string };

/** A one-shot this far in the past is refused at creation and not run when found overdue. */
export const ONE_SHOT_GRACE_MS = 120_000;

const UNIT_MINUTES: ReadonlyArray<[RegExp, number]> = [
  [/^(m|min|mins|minute|minutes)$/, 1],
  [/^(h|hr|hrs|hour|hours)$/, 60],
  [/^(d|day|days)$/, 1440],
];

const FORMS_HELP =
  'use one of: "every 30m" (interval), "0 9 * * 1-5" (cron), "2027-01-15T14:00:00" (ISO time), "30m" (delay)';

function durationMinutes(text: string): number | null {
  const match = /^(\d+)\s*([a-z]+)$/i.exec(text.trim());
  if (!match) return null;
  const amount = Number(match[1]);
  const unit = UNIT_MINUTES.find(([pattern]) => pattern.test(match[2]!.toLowerCase()));
  if (!unit || !Number.isSafeInteger(amount) || amount <= 0) return null;
  return amount * unit[1];
}

const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

function parseIso(text: string, timeZone: string): Date | null {
  const match = ISO_PATTERN.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [
    number, number, number, number, number, number,
  ];
  const probe = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const sameFields =
    probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day &&
    probe.getUTCHours() === hour && probe.getUTCMinutes() === minute;
  if (!sameFields) {
    throw new InvalidScheduleError(ERROR_CODES.SCHEDULE.INVALID, `"${text}" is not a real date and time; check the day, month and hour.`);
  }
  const offset = match[7];
  if (offset) {
    return new Date(Date.parse(`${text.replace(' ', 'T')}`));
  }
  return instantOfWallClock({ year, month, day, hour, minute, second }, timeZone);
}

/**
 * Reads a schedule written by a user, trying the four forms in the order of decisions §3:
 * interval, cron, ISO timestamp, relative delay. Naive times are read in `timeZone`.
 * Throws SCHEDULE.INVALID with a message listing the forms when nothing matches.
 */
export function parseSchedule(input: string, now: Date, timeZone: string): Schedule {
  const text = input.trim();
  const interval = /^every\s+(.+)$/i.exec(text);
  if (interval) {
    const minutes = durationMinutes(interval[1]!);
    if (minutes === null) {
      throw new InvalidScheduleError(ERROR_CODES.SCHEDULE.INVALID, `"${text}" is not a valid interval; write it like "every 30m", "every 2h" or "every 1d".`);
    }
    const expr = `every ${interval[1]!.trim()}`;
    return { kind: 'interval', expr, display: expr, minutes };
  }
  if (looksLikeCron(text)) {
    const expr = parseCronExpression(text);
    return { kind: 'cron', expr, display: expr };
  }
  const at = parseIso(text, timeZone);
  if (at) {
    if (now.getTime() - at.getTime() > ONE_SHOT_GRACE_MS) {
      throw new InvalidScheduleError(ERROR_CODES.SCHEDULE.PAST, `"${text}" is in the past; give a future time.`);
    }
    return { kind: 'once', expr: text, display: `once at ${formatWallClock(at, timeZone)}`, run_at: toIsoUtc(at) };
  }
  const delay = durationMinutes(text);
  if (delay !== null) {
    return {
      kind: 'once',
      expr: text,
      display: `once in ${text}`,
      run_at: toIsoUtc(new Date(now.getTime() + delay * 60_000)),
    };
  }
  throw new InvalidScheduleError(ERROR_CODES.SCHEDULE.INVALID, `"${text}" is not a schedule; ${FORMS_HELP}.`);
}

export function isRecurring(schedule: Schedule): boolean {
  return schedule.kind !== 'once';
}

/**
 * When a schedule should next fire, counting from `from`: intervals one interval later, cron the
 * next matching wall-clock time in `timeZone` strictly after `from`, one-shots their fixed time.
 */
export function nextRunTime(schedule: Schedule, from: Date, timeZone: string): Date | null {
  switch (schedule.kind) {
    case 'interval':
      return new Date(from.getTime() + schedule.minutes * 60_000);
    case 'cron':
      return nextCronRun(schedule.expr, from, timeZone);
    case 'once':
      return new Date(schedule.run_at);
  }
}

/** Reads a stored schedule back, tolerating the shapes older versions wrote. Null when unusable. */
export function scheduleFromRecord(value: unknown): Schedule | null {
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const expr = typeof record.expr === 'string' ? record.expr : null;
  const display = typeof record.display === 'string' ? record.display : expr;
  if (expr === null || display === null) return null;
  if (record.kind === 'cron') {
    try {
      return { kind: 'cron', expr: parseCronExpression(expr), display };
    } catch {
      return null;
    }
  }
  if (record.kind === 'interval') {
    const minutes = typeof record.minutes === 'number' ? record.minutes : durationMinutes(expr.replace(/^every\s+/i, ''));
    return minutes && minutes > 0 ? { kind: 'interval', expr, display, minutes } : null;
  }
  if (record.kind === 'once' && typeof record.run_at === 'string' && !Number.isNaN(Date.parse(record.run_at))) {
    return { kind: 'once', expr, display, run_at: record.run_at };
  }
  return null;
}
