/**
 * Run in a child process of its own (its `process.env` is the real one): for every zone the
 * runtime lists, the wall clocks read from `Date` once the process runs on that zone against
 * those the formatter gives. Prints one JSON line.
 */
import { runOnTimeZone } from '../../src/adapters/system/hostTimeZone.js';
import { formatWallClock, instantOfWallClock, localTimeIs, wallClockAt } from '../../src/domain/zonedTime.js';

const instants = [
  '2026-01-15T12:34:56Z',
  '2026-03-08T06:59:59Z',
  '2026-03-29T01:00:00Z',
  '2026-10-25T00:59:59Z',
  '2026-11-01T06:00:00Z',
  '1999-12-31T23:59:59Z',
].map((text) => new Date(text));
const gap = { year: 2026, month: 3, day: 29, hour: 2, minute: 30, second: 0 };
const repeated = { year: 2026, month: 10, day: 25, hour: 2, minute: 30, second: 0 };
const reading = (zone: string) =>
  JSON.stringify([
    ...instants.map((instant) => wallClockAt(instant, zone)),
    instantOfWallClock(gap, zone),
    instantOfWallClock(repeated, zone),
  ]);

const mismatches: string[] = [];
let onDate = 0;
for (const zone of Intl.supportedValuesOf('timeZone')) {
  localTimeIs(null);
  // From a zone no other reads like (UTC+14 all year), so that the move to `zone` is seen.
  process.env.TZ = 'Pacific/Kiritimati';
  const byFormatter = reading(zone);
  runOnTimeZone(zone);
  if (process.env.TZ === zone) onDate += 1;
  if (reading(zone) !== byFormatter) mismatches.push(zone);
}
runOnTimeZone('Europe/Berlin');
const berlin = formatWallClock(new Date('2026-07-01T10:00:00Z'), 'Europe/Berlin');
const newYork = formatWallClock(new Date('2026-07-01T10:00:00Z'), 'America/New_York');
process.stdout.write(`${JSON.stringify({ zones: Intl.supportedValuesOf('timeZone').length, onDate, mismatches, berlin, newYork })}\n`);
