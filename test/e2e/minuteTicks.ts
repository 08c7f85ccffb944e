import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The gateway looks for due jobs by its own timer, armed for the earliest `next_run_at`, and as a
 * backstop at the start of every minute (MinuteTicker, `* * * * *`). A job due a few seconds
 * after one minute tick that runs before the next was run by the timer, however slow the machine
 * is: that is what the end-to-end tests assert instead of a lateness in seconds.
 */
const MINUTE_MS = 60_000;

/** The first minute tick after `at` (milliseconds since the epoch). */
export function nextMinuteTick(at: number): number {
  return (Math.floor(at / MINUTE_MS) + 1) * MINUTE_MS;
}

/**
 * The earliest whole second at or after `earliest` that is at least a second past a minute tick
 * and from which `spanMs` more ends at least `clearMs` before the next one.
 */
export function clearOfMinuteTicks(earliest: number, spanMs: number, clearMs: number): number {
  if (1_000 + spanMs + clearMs > MINUTE_MS) throw new RangeError('no minute has room for that span');
  const start = Math.ceil(earliest / 1_000) * 1_000;
  const intoMinute = start % MINUTE_MS;
  if (intoMinute >= 1_000 && intoMinute + spanMs <= MINUTE_MS - clearMs) return start;
  return intoMinute < 1_000 ? start - intoMinute + 1_000 : nextMinuteTick(start) + 1_000;
}

/** Waits for the wall clock to reach `at`; at once when it has. */
export async function untilTheClockReads(at: number): Promise<void> {
  const left = at - Date.now();
  if (left > 0) await sleep(left);
}
