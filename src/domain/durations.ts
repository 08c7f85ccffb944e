/**
 * Lengths of time as people write them on the command line and in config.yaml: `90s`, `10m`,
 * `1h30m`, `2 hours`, `1d` — a whole number and a unit, one or more of them — and as the service
 * writes them back (`timed out after 10m`). A run's time limit, a retry's back-off and a debounce
 * window (which also takes `ms`) are read with these.
 */

const UNIT_MS: ReadonlyArray<[RegExp, number]> = [
  [/^(ms|msec|msecs|millisecond|milliseconds)$/, 1],
  [/^(s|sec|secs|second|seconds)$/, 1000],
  [/^(m|min|mins|minute|minutes)$/, 60_000],
  [/^(h|hr|hrs|hour|hours)$/, 3_600_000],
  [/^(d|day|days)$/, 86_400_000],
];

/** About 100 years: longer is no limit anyone means, and would not fit a timer. */
const LONGEST_MS = 100 * 365 * 86_400_000;

const WHOLE = /^(\d+\s*[a-z]+\s*)+$/;
const PART = /(\d+)\s*([a-z]+)/g;

/**
 * The milliseconds of a duration (`500ms`, `45s`, `10m`, `1h30m`, `2 hours`), or why it is not
 * one, as a phrase that follows "… is not a duration: ". A bare number is refused: a unit says
 * whether it means seconds or minutes.
 */
export function durationMs(text: string): number | string {
  const written = text.trim().toLowerCase();
  if (written === '') return 'it is empty';
  if (/^\d+(\.\d+)?$/.test(written)) return 'it has no unit (s for seconds, m for minutes, h for hours, d for days)';
  if (!WHOLE.test(written)) return 'write whole numbers with units, such as 90s, 10m, 1h30m or 1d';
  let ms = 0;
  for (const [, amount, unitText] of written.matchAll(PART)) {
    const unit = UNIT_MS.find(([pattern]) => pattern.test(unitText!));
    if (!unit) return `"${unitText}" is not a unit (s for seconds, m for minutes, h for hours, d for days)`;
    ms += Number(amount) * unit[1];
  }
  if (ms === 0) return 'it must be longer than 0 s';
  if (ms > LONGEST_MS) return 'it is longer than 100 years';
  return ms;
}

/** The seconds of a duration in whole seconds (`durationMs`), or why it is not one. */
export function durationSeconds(text: string): number | string {
  const ms = durationMs(text);
  if (typeof ms === 'string') return ms;
  return ms % 1000 === 0 ? ms / 1000 : 'it is not a whole number of seconds';
}

/** `durationSeconds`, or the error `problem` builds from its reason. */
export function parseDuration(text: string, problem: (reason: string) => Error): number {
  const seconds = durationSeconds(text);
  if (typeof seconds === 'string') throw problem(seconds);
  return seconds;
}

/** A number of seconds as the service writes it: `45s`, `10m`, `1h30m`, `2d` (a unit with none of it is left out: `1h5s`). */
export function formatDuration(totalSeconds: number): string {
  let rest = Math.max(0, Math.round(totalSeconds));
  if (rest === 0) return '0s';
  let text = '';
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * size;
  }
  return text;
}
