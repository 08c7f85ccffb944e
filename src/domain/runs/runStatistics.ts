/**
 * What the dashboard's overview draws from the run ledger (docs/dashboard.md, Overview): runs per
 * hour and per day stacked by status, cost per day per model, and how long each job's runs take.
 * Pure: every function is given the runs and the time it is asked at.
 */
import { instantOfWallClock, wallClockAsUtcMs, wallClockAt, wallClockFromUtcMs } from '../zonedTime.js';
import type { RunRecord, RunStatus } from './RunRecord.js';
import { roundCost } from './usage.js';

/** Every status a run can be in, in the order a chart stacks them (the good at the bottom). */
export const RUN_STATUSES: readonly RunStatus[] = [
  'ok',
  'delivery_queued',
  'running',
  'skipped',
  'delivery_failed',
  'blocked_config',
  'error',
] as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Runs counted per time bucket and status. */
export interface RunHistogram {
  /** Each bucket's start (ms since the epoch), oldest first. */
  starts: number[];
  /** Each bucket's label: `HH:00` for hours, `YYYY-MM-DD` for days, in the zone asked for. */
  labels: string[];
  /** Per status, the count of each bucket (same length as `starts`); every status is present. */
  counts: Record<RunStatus, number[]>;
}

/** A run whose record says something other than a status of RUN_STATUSES is counted as this. */
function statusOf(run: Pick<RunRecord, 'status'>): RunStatus {
  return (RUN_STATUSES as readonly string[]).includes(run.status) ? run.status : 'error';
}

const pad = (value: number) => String(value).padStart(2, '0');

/** `YYYY-MM-DD` of an instant's date in `timeZone`. */
export function dayKey(instant: Date, timeZone: string): string {
  const c = wallClockAt(instant, timeZone);
  return `${c.year}-${pad(c.month)}-${pad(c.day)}`;
}

/** The last `days` dates (`YYYY-MM-DD`) in `timeZone`, today's last, with the instant each starts at. */
export function lastDays(now: Date, days: number, timeZone: string): Array<{ key: string; start: number }> {
  const today = wallClockAt(now, timeZone);
  const midnight = wallClockAsUtcMs({ ...today, hour: 0, minute: 0, second: 0 });
  return Array.from({ length: days }, (_unused, index) => {
    const clock = wallClockFromUtcMs(midnight - (days - 1 - index) * DAY_MS);
    return { key: `${clock.year}-${pad(clock.month)}-${pad(clock.day)}`, start: instantOfWallClock(clock, timeZone).getTime() };
  });
}

function emptyCounts(length: number): Record<RunStatus, number[]> {
  return Object.fromEntries(RUN_STATUSES.map((status) => [status, new Array<number>(length).fill(0)])) as Record<RunStatus, number[]>;
}

/**
 * The runs that started in each of the last `hours` whole hours, the current one last (hours are
 * of the clock in UTC: the same instants in every zone but those a fraction of an hour off),
 * by status. Runs outside the period are not counted.
 */
export function runsPerHour(
  runs: ReadonlyArray<Pick<RunRecord, 'started_at' | 'status'>>,
  now: Date,
  hours: number,
  timeZone: string,
): RunHistogram {
  const first = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - (hours - 1) * HOUR_MS;
  const starts = Array.from({ length: hours }, (_unused, index) => first + index * HOUR_MS);
  const counts = emptyCounts(hours);
  for (const run of runs) {
    const index = Math.floor((Date.parse(run.started_at) - first) / HOUR_MS);
    if (index >= 0 && index < hours) counts[statusOf(run)][index]! += 1;
  }
  const labels = starts.map((start) => `${pad(wallClockAt(new Date(start), timeZone).hour)}:00`);
  return { starts, labels, counts };
}

/** The runs that started on each of the last `days` dates in `timeZone`, today last, by status. */
export function runsPerDay(
  runs: ReadonlyArray<Pick<RunRecord, 'started_at' | 'status'>>,
  now: Date,
  days: number,
  timeZone: string,
): RunHistogram {
  const period = lastDays(now, days, timeZone);
  const index = new Map(period.map((day, position) => [day.key, position]));
  const counts = emptyCounts(days);
  for (const run of runs) {
    const position = index.get(dayKey(new Date(run.started_at), timeZone));
    if (position !== undefined) counts[statusOf(run)][position]! += 1;
  }
  return { starts: period.map((day) => day.start), labels: period.map((day) => day.key), counts };
}

/** What runs cost on each day, per model. */
export interface CostPerDay {
  /** The dates (`YYYY-MM-DD`, in the zone asked for), oldest first. */
  days: string[];
  /** The models that cost something in the period, the most expensive first, each with its cost per day in US dollars. */
  models: Array<{ model: string; costs: number[]; total: number }>;
}

/**
 * The cost of the runs that started on each of the last `days` dates, per model (`provider/model`
 * as recorded; `unknown model` when none is). Runs without a cost are left out; no model appears
 * when no run had a cost.
 */
export function costPerDayPerModel(
  runs: ReadonlyArray<Pick<RunRecord, 'started_at' | 'model' | 'cost_usd'>>,
  now: Date,
  days: number,
  timeZone: string,
): CostPerDay {
  const period = lastDays(now, days, timeZone);
  const index = new Map(period.map((day, position) => [day.key, position]));
  const byModel = new Map<string, number[]>();
  for (const run of runs) {
    if (typeof run.cost_usd !== 'number' || !Number.isFinite(run.cost_usd)) continue;
    const position = index.get(dayKey(new Date(run.started_at), timeZone));
    if (position === undefined) continue;
    const model = run.model ?? 'unknown model';
    const costs = byModel.get(model) ?? new Array<number>(days).fill(0);
    costs[position] = roundCost(costs[position]! + run.cost_usd);
    byModel.set(model, costs);
  }
  const models = [...byModel.entries()]
    .map(([model, costs]) => ({ model, costs, total: roundCost(costs.reduce((sum, cost) => sum + cost, 0)) }))
    .sort((a, b) => b.total - a.total || (a.model < b.model ? -1 : 1));
  return { days: period.map((day) => day.key), models };
}

/** The `fraction` (0–1) percentile of `values` by the nearest-rank method; null for none. */
export function percentile(values: readonly number[], fraction: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(Math.min(Math.max(fraction, 0), 1) * sorted.length));
  return sorted[rank - 1]!;
}

/** How long one job's (or route's) finished runs took. */
export interface RunDurations {
  kind: RunRecord['kind'];
  subject: string;
  /** The name of its newest run. */
  name: string;
  /** Finished runs counted. */
  runs: number;
  p50_ms: number;
  p95_ms: number;
}

/**
 * The median and 95th percentile of the time each job's and route's finished runs took (a skipped
 * slot ran nothing and is left out), the slowest p95 first.
 */
export function durationsPerSubject(
  runs: ReadonlyArray<Pick<RunRecord, 'kind' | 'subject' | 'name' | 'started_at' | 'finished_at' | 'status'>>,
): RunDurations[] {
  const bySubject = new Map<string, { kind: RunRecord['kind']; subject: string; name: string; newest: number; took: number[] }>();
  for (const run of runs) {
    if (run.finished_at === null || run.status === 'skipped') continue;
    const started = Date.parse(run.started_at);
    const took = Date.parse(run.finished_at) - started;
    if (!Number.isFinite(took) || took < 0) continue;
    const key = `${run.kind}\n${run.subject}`;
    const entry = bySubject.get(key) ?? { kind: run.kind, subject: run.subject, name: run.name, newest: started, took: [] };
    if (started >= entry.newest) Object.assign(entry, { newest: started, name: run.name });
    entry.took.push(took);
    bySubject.set(key, entry);
  }
  return [...bySubject.values()]
    .map((entry) => ({
      kind: entry.kind,
      subject: entry.subject,
      name: entry.name,
      runs: entry.took.length,
      p50_ms: percentile(entry.took, 0.5)!,
      p95_ms: percentile(entry.took, 0.95)!,
    }))
    .sort((a, b) => b.p95_ms - a.p95_ms || (a.name < b.name ? -1 : 1));
}

/** How many of `items` have each value of `key`, for each of `values` (zero when none). */
export function countBy<T, V extends string>(items: readonly T[], values: readonly V[], key: (item: T) => V | null): Record<V, number> {
  const counts = Object.fromEntries(values.map((value) => [value, 0])) as Record<V, number>;
  for (const item of items) {
    const value = key(item);
    if (value !== null && Object.hasOwn(counts, value)) counts[value] += 1;
  }
  return counts;
}

/** `1.2 s`, `850 ms`, `3 min 5 s`: a duration in words. */
export function durationInWords(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

/** How many of `times` (ISO 8601) fall in each of the last `hours` whole hours, the current one last: a route's events per hour. */
export function countPerHour(times: readonly string[], now: Date, hours: number): number[] {
  const first = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - (hours - 1) * HOUR_MS;
  const counts = new Array<number>(hours).fill(0);
  for (const time of times) {
    const index = Math.floor((Date.parse(time) - first) / HOUR_MS);
    if (index >= 0 && index < hours) counts[index]! += 1;
  }
  return counts;
}
