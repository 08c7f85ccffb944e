import { isListedTimeZone, localTimeIs } from '../../domain/zonedTime.js';

/**
 * Running a command on the jobs' zone. Reading a wall clock through `Intl.DateTimeFormat` first
 * costs the runtime's whole date-formatting set-up (about 12 ms, a tenth of `agent cron list`);
 * `Date`'s local time costs nothing once `TZ` names the zone. So the command line sets `TZ` to
 * the configured zone and tells the domain, which then reads that zone's wall clocks from `Date`.
 * Only zones the runtime lists by name are taken this way: for those, `Date` and the formatter
 * read the same zone data. What the process starts still gets the `TZ` it was given
 * (`environmentAsGiven`).
 */
const givenTz = process.env.TZ;
let adopted: string | null = null;

/**
 * Sets this process's local time to `timeZone` when that is safe; otherwise changes nothing.
 * Where `process.env` is not the process's own environment (a test runner's copy), setting `TZ`
 * moves no clock: that is seen, and the formatter stays in use.
 */
export function runOnTimeZone(timeZone: string): void {
  if (!isListedTimeZone(timeZone)) return;
  if (process.env.TZ !== timeZone) {
    const before = localTimeShown();
    const was = process.env.TZ;
    process.env.TZ = timeZone;
    if (localTimeShown() === before) {
      // Either nothing moved, or the two zones read alike on the probe days: either way, not sure.
      if (was === undefined) delete process.env.TZ;
      else process.env.TZ = was;
      return;
    }
  }
  adopted = timeZone;
  localTimeIs(timeZone);
}

/** How `Date` shows a winter and a summer noon in its local time, zone names included. */
function localTimeShown(): string {
  return `${new Date(Date.UTC(2026, 0, 1, 12)).toString()} ${new Date(Date.UTC(2026, 6, 1, 12)).toString()}`;
}

/** `env` as this process was given it: the `TZ` set by runOnTimeZone taken back out (`TZ` as it was when this module loaded). */
export function environmentAsGiven(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (adopted === null || env.TZ !== adopted || givenTz === adopted) return env;
  const copy = { ...env };
  if (givenTz === undefined) delete copy.TZ;
  else copy.TZ = givenTz;
  return copy;
}
