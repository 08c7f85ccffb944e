import { Cron } from 'croner';
import { ERROR_CODES } from './errorCodes.js';
import { InvalidScheduleError } from './errors.js';
import {
  instantOfWallClock,
  wallClockAsUtcMs,
  wallClockAt,
  wallClockFromUtcMs,
} from './zonedTime.js';

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: Record<string, number>;
}

/** The names cron accepts for months and days of the week, by their numbers. */
export const CRON_MONTH_NAMES: Readonly<Record<string, number>> = {
  JAN: 1, FEB: 2, MAR: 3, APR: 4, MAY: 5, JUN: 6, JUL: 7, AUG: 8, SEP: 9, OCT: 10, NOV: 11, DEC: 12,
};
export const CRON_DAY_NAMES: Readonly<Record<string, number>> = { SUN: 0, MON: 1, TUE: 2, WED: 3, THU: 4, FRI: 5, SAT: 6 };

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: CRON_MONTH_NAMES },
  { name: 'day-of-week', min: 0, max: 7, names: CRON_DAY_NAMES },
];

function invalid(field: FieldSpec, value: string, why: string): InvalidScheduleError {
  return new InvalidScheduleError(
    ERROR_CODES.SCHEDULE.INVALID,
    `Cron ${field.name} field "${value}" ${why}; use numbers ${field.min}-${field.max}` +
      `${field.names ? ' or names' : ''}, "*", lists (a,b), ranges (a-b) and steps (*/n, a-b/n).`,
  );
}

function valueOf(field: FieldSpec, token: string, whole: string): number {
  const named = field.names?.[token.toUpperCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(token)) throw invalid(field, whole, `has "${token}", which is not a value`);
  const value = Number(token);
  if (value < field.min || value > field.max) {
    throw invalid(field, whole, `has ${value}, which is out of range`);
  }
  return value;
}

function validateField(field: FieldSpec, text: string): void {
  for (const item of text.split(',')) {
    const [range, step, extra] = item.split('/');
    if (range === undefined || range === '' || extra !== undefined) {
      throw invalid(field, text, `has "${item}", which is not a value, range or step`);
    }
    if (step !== undefined && (!/^\d+$/.test(step) || Number(step) === 0)) {
      throw invalid(field, text, `has step "${step}", which is not a positive number`);
    }
    if (range === '*') continue;
    const bounds = range.split('-');
    if (bounds.length > 2) throw invalid(field, text, `has "${range}", which is not a range`);
    const [low, high] = bounds.map((bound) => valueOf(field, bound, text));
    if (high !== undefined && low !== undefined && low > high) {
      throw invalid(field, text, `has the range ${range}, whose start is after its end`);
    }
    if (step !== undefined && high === undefined) {
      throw invalid(field, text, `has "${item}"; a step needs "*" or a range before it`);
    }
  }
}

/** Whether `input` has the shape of a five-field cron expression (it may still be invalid). */
export function looksLikeCron(input: string): boolean {
  const fields = input.trim().split(/\s+/);
  return fields.length === 5 && fields.every((field) => /^[\w*/,-]+$/.test(field));
}

/**
 * Validates a five-field cron expression (minute hour day-of-month month day-of-week) with
 * standard (Vixie) syntax and returns it with single spaces. The error names the offending field.
 */
export function parseCronExpression(input: string): string {
  const known = validExpressions.get(input);
  if (known !== undefined) return known;
  const fields = input.trim().split(/\s+/);
  if (fields.length !== 5) {
    throw new InvalidScheduleError(
      ERROR_CODES.SCHEDULE.INVALID,
      `A cron expression has 5 fields (minute hour day-of-month month day-of-week); "${input.trim()}" has ${fields.length}.`,
    );
  }
  fields.forEach((text, index) => validateField(FIELDS[index]!, text));
  const normalized = fields.join(' ');
  validExpressions.set(input, normalized);
  return normalized;
}

/**
 * Expressions already validated, as written → normalized. A store of thousands of jobs shares a
 * handful of expressions, and every load reads them all; only valid ones are kept, so the cache
 * is bounded by the distinct valid expressions in use.
 */
const validExpressions = new Map<string, string>();

const patterns = new Map<string, Cron>();

/** Croner evaluates the pattern on wall-clock readings encoded as UTC, so it never sees a zone. */
function wallClockPattern(expression: string): Cron {
  let pattern = patterns.get(expression);
  if (!pattern) {
    // domAndDow false: day-of-month and day-of-week are ORed when both are restricted (Vixie).
    pattern = new Cron(expression, { timezone: 'Etc/UTC', domAndDow: false, mode: '5-part' });
    patterns.set(expression, pattern);
  }
  return pattern;
}

/** Bound on candidates skipped in a repeated hour (at most one per minute of it). */
const MAX_SKIPPED = 24 * 60;

/**
 * The first instant strictly after `after` at which `expression` matches the wall clock of
 * `timeZone`. A matching wall-clock time inside a DST gap fires at the first instant after the
 * gap; a wall-clock time that happens twice fires once, at its first occurrence.
 */
export function nextCronRun(expression: string, after: Date, timeZone: string): Date | null {
  const pattern = wallClockPattern(expression);
  let cursor = new Date(wallClockAsUtcMs(wallClockAt(after, timeZone)));
  for (let skipped = 0; skipped <= MAX_SKIPPED; skipped += 1) {
    const candidate = pattern.nextRun(cursor);
    if (!candidate) return null;
    const instant = instantOfWallClock(wallClockFromUtcMs(candidate.getTime()), timeZone);
    if (instant.getTime() > after.getTime()) return instant;
    cursor = candidate;
  }
  return null;
}
