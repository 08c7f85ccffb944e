import { Cron } from 'croner';
import { ERROR_CODES } from './errorCodes.js';
import { InvalidScheduleError } from './errors.js';
import { ownEntry } from './ownEntry.js';
import { instantOfWallClock, wallClockAsUtcMs, wallClockAt, wallClockFromUtcMs } from './zonedTime.js';

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  /** The largest step: the number of distinct values (7 days of the week, though 7 is also Sunday). */
  maxStep: number;
  names?: Record<string, number>;
}

/** The names cron accepts for months and days of the week, by their numbers. */
export const CRON_MONTH_NAMES: Readonly<Record<string, number>> = {
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
};
export const CRON_DAY_NAMES: Readonly<Record<string, number>> = { SUN: 0, MON: 1, TUE: 2, WED: 3, THU: 4, FRI: 5, SAT: 6 };

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59, maxStep: 60 },
  { name: 'hour', min: 0, max: 23, maxStep: 24 },
  { name: 'day-of-month', min: 1, max: 31, maxStep: 31 },
  { name: 'month', min: 1, max: 12, maxStep: 12, names: CRON_MONTH_NAMES },
  { name: 'day-of-week', min: 0, max: 7, maxStep: 7, names: CRON_DAY_NAMES },
];

const DAY_OF_MONTH = 2;
const DAY_OF_WEEK = 4;

/** What is wrong with one field: which field, as written, and why. */
interface FieldFault {
  field: FieldSpec;
  text: string;
  why: string;
}

/** The number `token` stands for in `field`, or why it stands for none. */
function valueOf(field: FieldSpec, token: string): number | string {
  const named = field.names && ownEntry(field.names, token.toUpperCase());
  if (named !== undefined) return named;
  if (!/^\d+$/.test(token)) return `has "${token}", which is not a value`;
  const value = Number(token);
  if (value < field.min || value > field.max) return `has ${value}, which is out of range`;
  return value;
}

/** Why `text` is not a valid `field`, or null when it is. */
function fieldFault(field: FieldSpec, text: string): string | null {
  for (const item of text.split(',')) {
    const [range, step, extra] = item.split('/');
    if (range === undefined || range === '' || extra !== undefined) {
      return `has "${item}", which is not a value, range or step`;
    }
    if (step !== undefined && (!/^\d+$/.test(step) || Number(step) === 0)) {
      return `has step "${step}", which is not a positive number`;
    }
    if (step !== undefined && Number(step) > field.maxStep) {
      return `has step ${Number(step)}, which is not between 1 and ${field.maxStep}`;
    }
    if (range === '*') continue;
    const bounds = range.split('-');
    if (bounds.length > 2) return `has "${range}", which is not a range`;
    const values = bounds.map((bound) => valueOf(field, bound));
    const wrongValue = values.find((value): value is string => typeof value === 'string');
    if (wrongValue !== undefined) return wrongValue;
    const [low, high] = values as number[];
    if (high !== undefined && low !== undefined && low > high) {
      return `has the range ${range}, whose start is after its end`;
    }
    if (step !== undefined && high === undefined) {
      return `has "${item}"; a step needs "*" or a range before it`;
    }
  }
  return null;
}

/** The first wrong field of five, or null when all five are valid. */
function firstFieldFault(fields: readonly string[]): FieldFault | null {
  for (const [index, text] of fields.entries()) {
    const field = FIELDS[index]!;
    const why = fieldFault(field, text);
    if (why !== null) return { field, text, why };
  }
  return null;
}

/** Whether `input` has the shape of a five-field cron expression (it may still be invalid). */
export function looksLikeCron(input: string): boolean {
  const fields = input.trim().split(/\s+/);
  // `?` and `#` are other dialects' syntax: still meant as cron, so the error names the field.
  return fields.length === 5 && fields.every((field) => /^[\w*/,#?-]+$/.test(field));
}

/**
 * What is wrong with a cron expression, as a phrase naming the field (`the hour field "25" has
 * 25, which is out of range`), or null when it is valid: for reporting a stored record.
 */
export function cronExpressionFault(input: string): string | null {
  if (validExpressions.has(input)) return null;
  const fields = input.trim().split(/\s+/);
  if (fields.length !== 5) return `it has ${fields.length} fields, not 5 (minute hour day-of-month month day-of-week)`;
  const fault = firstFieldFault(fields);
  return fault && `the ${fault.field.name} field "${fault.text}" ${fault.why}`;
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
  const fault = firstFieldFault(fields);
  if (fault) {
    const { field, text, why } = fault;
    throw new InvalidScheduleError(
      ERROR_CODES.SCHEDULE.INVALID,
      `Cron ${field.name} field "${text}" ${why}; use numbers ${field.min}-${field.max}` +
        `${field.names ? ' or names' : ''}, "*", lists (a,b), ranges (a-b) and steps (*/n, a-b/n).`,
    );
  }
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

// Vixie cron ORs day-of-month and day-of-week only when neither field starts with "*"; when
// either does ("*", "*/2"), a day must match both, which for a bare "*" is the other field alone.
// Croner ORs whenever a field is not exactly "*": "0 0 */2 * 1" would fire on every odd day.
function daysMustMatchBoth(expression: string): boolean {
  const fields = expression.trim().split(/\s+/);
  return fields[DAY_OF_MONTH]!.startsWith('*') || fields[DAY_OF_WEEK]!.startsWith('*');
}

/** Croner evaluates the pattern on wall-clock readings encoded as UTC, so it never sees a zone. */
function wallClockPattern(expression: string): Cron {
  let pattern = patterns.get(expression);
  if (!pattern) {
    pattern = new Cron(expression, {
      timezone: 'Etc/UTC',
      domAndDow: daysMustMatchBoth(expression),
      mode: '5-part',
    });
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
