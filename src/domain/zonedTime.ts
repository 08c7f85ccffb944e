import { ERROR_CODES } from './errorCodes.js';
import { InvalidScheduleError } from './errors.js';

/** A wall-clock reading in some time zone; month is 1-12. */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * The zones the runtime lists as its canonical names, plus UTC under its usual names. Knowing a
 * name is on this list costs a millisecond; building a formatter to find out costs the runtime's
 * whole date-formatting set-up, about 12 ms of every command's start-up.
 */
let listedZones: Set<string> | undefined;

/** True when `timeZone` is one of the runtime's listed IANA names (an alias may still be valid). */
export function isListedTimeZone(timeZone: string): boolean {
  listedZones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC']);
  return listedZones.has(timeZone);
}

/** Throws a clear error unless `timeZone` is an IANA zone name this runtime knows. */
export function assertTimeZone(timeZone: string): string {
  if (isListedTimeZone(timeZone)) return timeZone;
  try {
    formatterFor(timeZone);
    return timeZone;
  } catch {
    throw new InvalidScheduleError(
      ERROR_CODES.TIMEZONE.INVALID,
      `"${timeZone}" is not a valid time zone; use an IANA name such as "Europe/Berlin" or "UTC".`,
    );
  }
}

/**
 * The zone whose wall clock the runtime's own local time shows (`Date`'s `getHours` …), when the
 * process was set to run on it (src/adapters/system/hostTimeZone.ts); null when unknown. Wall
 * clocks in that zone are then read from `Date` instead of through a formatter.
 */
let localTimeZone: string | null = null;

/** Says that `Date`'s local time is now `timeZone`'s wall clock (null: no longer known). */
export function localTimeIs(timeZone: string | null): void {
  localTimeZone = timeZone;
}

/**
 * `timeZone` (a name assertTimeZone accepts) spelt as the tz database spells it when only its
 * case differs (`america/new_york` → `America/New_York`); otherwise as given, so that a link such
 * as `Asia/Kolkata` is never swapped for another name of the same zone.
 */
export function zoneSpelling(timeZone: string): string {
  if (isListedTimeZone(timeZone)) return timeZone;
  const resolved = formatterFor(timeZone).resolvedOptions().timeZone;
  return resolved.toLowerCase() === timeZone.toLowerCase() ? resolved : timeZone;
}

/**
 * Zones whose wall clock is UTC's at every instant: read from `Date` too, as building the first
 * formatter sets up the runtime's whole date-formatting data (about 20 ms of a command's start-up).
 */
const UTC_ZONES: ReadonlySet<string> = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT']);

/** The wall clock shown in `timeZone` at `instant`. */
export function wallClockAt(instant: Date, timeZone: string): WallClock {
  if (UTC_ZONES.has(timeZone)) return wallClockFromUtcMs(instant.getTime());
  if (timeZone === localTimeZone) {
    return {
      year: instant.getFullYear(),
      month: instant.getMonth() + 1,
      day: instant.getDate(),
      hour: instant.getHours(),
      minute: instant.getMinutes(),
      second: instant.getSeconds(),
    };
  }
  const parts = formatterFor(timeZone).formatToParts(instant);
  const field = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((part) => part.type === type)?.value ?? NaN);
  return {
    year: field('year'),
    month: field('month'),
    day: field('day'),
    hour: field('hour'),
    minute: field('minute'),
    second: field('second'),
  };
}

/** Milliseconds of a wall clock as if it were UTC: a time-zone-free way to do calendar arithmetic. */
export function wallClockAsUtcMs(clock: WallClock): number {
  return Date.UTC(clock.year, clock.month - 1, clock.day, clock.hour, clock.minute, clock.second);
}

export function wallClockFromUtcMs(ms: number): WallClock {
  const date = new Date(ms);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
  };
}

function offsetMsAt(instantMs: number, timeZone: string): number {
  const wholeSecond = Math.floor(instantMs / 1000) * 1000;
  return wallClockAsUtcMs(wallClockAt(new Date(wholeSecond), timeZone)) - wholeSecond;
}

const DAY_MS = 86_400_000;

/**
 * The instant at which `timeZone` shows `clock`.
 * DST rules: a wall clock inside a spring-forward gap maps to the first instant
 * after the gap; a wall clock that happens twice maps to its first occurrence.
 */
export function instantOfWallClock(clock: WallClock, timeZone: string): Date {
  const asUtc = wallClockAsUtcMs(clock);
  const offsetBefore = offsetMsAt(asUtc - DAY_MS, timeZone);
  const offsetAfter = offsetMsAt(asUtc + DAY_MS, timeZone);
  const shows = (ms: number) => wallClockAsUtcMs(wallClockAt(new Date(ms), timeZone)) === asUtc;
  const candidates = [asUtc - offsetBefore, asUtc - offsetAfter].filter(shows);
  if (candidates.length > 0) return new Date(Math.min(...candidates));
  // Also try the offset at the reading itself, for zones whose offset moved twice in two days.
  const direct = asUtc - offsetMsAt(asUtc, timeZone);
  if (shows(direct)) return new Date(direct);
  return new Date(firstInstantWithOffset(asUtc - offsetAfter, asUtc - offsetBefore, offsetAfter, timeZone));
}

/** Binary search, to the second, for the transition into `offset` within [low, high]. */
function firstInstantWithOffset(low: number, high: number, offset: number, timeZone: string): number {
  let lo = Math.min(low, high);
  let hi = Math.max(low, high);
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (offsetMsAt(mid, timeZone) === offset) hi = mid;
    else lo = mid;
  }
  return hi;
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/** `YYYY-MM-DD HH:MM` in `timeZone`. */
export function formatWallClock(instant: Date, timeZone: string): string {
  const c = wallClockAt(instant, timeZone);
  return `${c.year}-${pad(c.month)}-${pad(c.day)} ${pad(c.hour)}:${pad(c.minute)}`;
}

/** `YYYY-MM-DD_HH-MM-SS` in `timeZone`: sortable, safe as a file name. */
export function formatFileStamp(instant: Date, timeZone: string): string {
  const c = wallClockAt(instant, timeZone);
  return `${c.year}-${pad(c.month)}-${pad(c.day)}_${pad(c.hour)}-${pad(c.minute)}-${pad(c.second)}`;
}

/** ISO 8601 in UTC ending in `Z`, without milliseconds, as jobs.json stores times. */
export function toIsoUtc(instant: Date): string {
  return new Date(Math.floor(instant.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
