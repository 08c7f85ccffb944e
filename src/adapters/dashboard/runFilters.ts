/**
 * The run list's address (docs/dashboard.md, Runs): its filters as query parameters
 * (`/runs?job=<id>&route=<name>&kind=cron&status=error&from=…&to=…&q=…&cursor=…`), read into a
 * ledger search, and the opaque cursor of the next page.
 */
import type { Request } from 'express';
import type { RunSearch } from '../../application/ports/RunLedger.js';
import { RUN_KINDS, type RunKind, type RunStatus } from '../../domain/runs/RunRecord.js';
import { RUN_STATUSES, type RunPosition } from '../../domain/runs/runSearch.js';
import { instantOfWallClock } from '../../domain/zonedTime.js';

/** Runs a page of the list shows. */
export const RUNS_PER_PAGE = 50;

/** The filters as given (the form's values, to show again), and what is wrong with them. */
export interface RunFilterValues {
  job: string;
  route: string;
  kind: string;
  status: string;
  from: string;
  to: string;
  q: string;
  cursor: string;
}

export const FILTER_NAMES = ['job', 'route', 'kind', 'status', 'from', 'to', 'q'] as const;

/** The filter values of a request's query (every one a string, empty when absent). */
export function filterValuesOf(request: Request): RunFilterValues {
  const value = (name: string) => (typeof request.query[name] === 'string' ? (request.query[name] as string).trim() : '');
  return {
    job: value('job'),
    route: value('route'),
    kind: value('kind'),
    status: value('status'),
    from: value('from'),
    to: value('to'),
    q: value('q'),
    cursor: value('cursor'),
  };
}

/** The query string of `values` without the cursor (`job=…&status=…`), empty filters left out. */
export function filterQuery(values: RunFilterValues, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams();
  for (const name of FILTER_NAMES) if (values[name] !== '') query.set(name, values[name]);
  for (const [name, value] of Object.entries(extra)) query.set(name, value);
  return query.toString();
}

const WALL_CLOCK = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/**
 * A time of the filter: a wall clock in `timeZone` (`2026-06-20T08:00`, as a datetime-local
 * field sends it, or a date alone for its midnight), or an instant with its offset
 * (`2026-06-20T08:00:00Z`). Null when it is neither.
 */
export function timeOfFilter(text: string, timeZone: string): Date | null {
  const wall = WALL_CLOCK.exec(text);
  if (wall) {
    const [, year, month, day, hour = '0', minute = '0', second = '0'] = wall;
    const clock = { year: +year!, month: +month!, day: +day!, hour: +hour, minute: +minute, second: +second };
    if (clock.month < 1 || clock.month > 12 || clock.day < 1 || clock.day > 31 || clock.hour > 23 || clock.minute > 59) return null;
    return instantOfWallClock(clock, timeZone);
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text)) return null;
  const instant = new Date(text);
  return Number.isNaN(instant.getTime()) ? null : instant;
}

/** The cursor of the page after `position`: opaque to whoever holds it. */
export function cursorOf(position: RunPosition): string {
  return Buffer.from(JSON.stringify([position.started_at, position.id]), 'utf8').toString('base64url');
}

/** The position a cursor stands for; null when it is not one this dashboard made. */
export function positionOfCursor(cursor: string): RunPosition | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [startedAt, id] = value as unknown[];
    if (typeof startedAt !== 'string' || typeof id !== 'string' || Number.isNaN(Date.parse(startedAt))) return null;
    return { started_at: new Date(startedAt).toISOString(), id };
  } catch {
    return null;
  }
}

/**
 * The ledger search of `values`, or the sentence saying what in them is wrong. A job and a route
 * together name no run (a run is of one or the other).
 */
export function searchOf(
  values: RunFilterValues,
  timeZone: string,
): { search: RunSearch; problem: null } | { search: null; problem: string } {
  const search: RunSearch = { limit: RUNS_PER_PAGE };
  const refuse = (problem: string) => ({ search: null, problem }) as const;
  if (values.kind !== '') {
    if (!(RUN_KINDS as readonly string[]).includes(values.kind)) return refuse(`Kind must be cron or webhook, not "${values.kind}".`);
    search.kind = values.kind as RunKind;
  }
  if (values.job !== '' && values.route !== '') return refuse('A run is of a job or of a route, not both: choose one of Job and Route.');
  if (values.job !== '' || values.route !== '') {
    const kind: RunKind = values.job !== '' ? 'cron' : 'webhook';
    if (search.kind !== undefined && search.kind !== kind) return refuse(`A ${kind === 'cron' ? 'job' : 'route'} has only ${kind} runs.`);
    search.kind = kind;
    search.subject = values.job || values.route;
  }
  if (values.status !== '') {
    if (!(RUN_STATUSES as readonly string[]).includes(values.status))
      return refuse(`Status must be one of ${RUN_STATUSES.join(', ')}, not "${values.status}".`);
    search.status = values.status as RunStatus;
  }
  for (const [name, label] of [
    ['from', 'From'],
    ['to', 'To'],
  ] as const) {
    if (values[name] === '') continue;
    const at = timeOfFilter(values[name], timeZone);
    if (at === null) return refuse(`${label} is not a time: give it as 2026-06-20T08:00 (${timeZone}) or 2026-06-20T08:00:00Z.`);
    search[name] = at;
  }
  if (values.q !== '') search.text = values.q;
  if (values.cursor !== '') {
    const after = positionOfCursor(values.cursor);
    if (after === null)
      return refuse('This page of runs is not one the dashboard gave (its cursor is unknown); start again from the newest runs.');
    search.after = after;
  }
  return { search, problem: null };
}
