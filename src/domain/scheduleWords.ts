import { CRON_DAY_NAMES, CRON_MONTH_NAMES } from './cronExpression.js';
import { ownEntry } from './ownEntry.js';
import type { Schedule } from './Schedule.js';
import { formatWallClock } from './zonedTime.js';

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/**
 * A schedule in words, for `agent cron show`: "every 2 hours", "at 09:00 on Monday through
 * Friday", "once at 2027-01-15 14:00". Cron expressions this cannot put into plain words
 * (steps inside ranges, say) are described field by field, never wrongly.
 */
export function describeSchedule(schedule: Schedule, timeZone: string): string {
  switch (schedule.kind) {
    case 'interval':
      return `every ${duration(schedule.minutes)}`;
    case 'once':
      return `once, at ${formatWallClock(new Date(schedule.run_at), timeZone)}`;
    case 'cron':
      return describeCron(schedule.expr);
    case 'after':
      return 'only after the jobs it runs after, never by itself';
  }
}

function duration(minutes: number): string {
  if (!Number.isInteger(minutes)) {
    const seconds = Math.round(minutes * 60);
    return seconds === 1 ? 'second' : `${seconds} seconds`;
  }
  const [amount, unit] = minutes % 1440 === 0 ? [minutes / 1440, 'day'] : minutes % 60 === 0 ? [minutes / 60, 'hour'] : [minutes, 'minute'];
  return amount === 1 ? unit : `${amount} ${unit}s`;
}

/** One item of a cron field: `*`, `*\/n`, `a`, `a-b` or `a-b/n`, values already numbers. */
interface Item {
  low: number | null;
  high: number | null;
  step: number | null;
}

function itemsOf(field: string, names: Readonly<Record<string, number>> = {}): Item[] | null {
  const value = (token: string): number | null => ownEntry(names, token.toUpperCase()) ?? (/^\d+$/.test(token) ? Number(token) : null);
  const items: Item[] = [];
  for (const text of field.split(',')) {
    const [range = '', stepText] = text.split('/');
    const step = stepText === undefined ? null : Number(stepText);
    if (range === '*') {
      items.push({ low: null, high: null, step });
      continue;
    }
    const [lowText = '', highText] = range.split('-');
    const low = value(lowText);
    const high = highText === undefined ? low : value(highText);
    if (low === null || high === null) return null;
    items.push({ low, high, step });
  }
  return items;
}

/** `*` (or `*\/1`): every value of the field. */
const isEvery = (items: Item[]) => items.length === 1 && items[0]!.low === null && (items[0]!.step ?? 1) === 1;
/** n for `*\/n` with n above 1, else null. */
const everyN = (items: Item[]) => (items.length === 1 && items[0]!.low === null && (items[0]!.step ?? 1) > 1 ? items[0]!.step : null);
/** The single values of a field made of plain values only, or null. */
const plainValues = (items: Item[]) =>
  items.every((item) => item.low !== null && item.low === item.high && item.step === null) ? items.map((item) => item.low!) : null;

const pad = (value: number) => String(value).padStart(2, '0');

function joinWords(words: string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

function listOf(items: Item[], name: (value: number) => string): string | null {
  const words: string[] = [];
  for (const item of items) {
    if (item.low === null || item.step !== null) return null;
    words.push(item.low === item.high ? name(item.low) : `${name(item.low)} through ${name(item.high!)}`);
  }
  return joinWords(words);
}

function describeCron(expression: string): string {
  const [minute = '', hour = '', dayOfMonth = '', month = '', dayOfWeek = ''] = expression.split(' ');
  const time = timeWords(itemsOf(minute), itemsOf(hour), minute, hour);
  const days = dayWords(itemsOf(dayOfMonth), itemsOf(dayOfWeek, CRON_DAY_NAMES), dayOfMonth, dayOfWeek);
  const months = itemsOf(month, CRON_MONTH_NAMES);
  const monthText =
    months === null || isEvery(months) ? '' : ` in ${listOf(months, (m) => MONTH_NAMES[m - 1] ?? String(m)) ?? `month ${month}`}`;
  return `${time}${days}${monthText}`;
}

function timeWords(minutes: Item[] | null, hours: Item[] | null, minuteText: string, hourText: string): string {
  const fallback = `at minute ${minuteText} of hour ${hourText}`;
  if (minutes === null || hours === null) return fallback;
  const minuteValues = plainValues(minutes);
  const hourValues = plainValues(hours);
  if (minuteValues && hourValues && minuteValues.length * hourValues.length <= 6) {
    const times = hourValues.flatMap((h) => minuteValues.map((m) => `${pad(h)}:${pad(m)}`)).sort();
    return `at ${joinWords(times)}`;
  }
  const minuteStep = everyN(minutes);
  let perHour: string;
  if (isEvery(minutes)) perHour = 'every minute';
  else if (minuteStep !== null) perHour = `every ${minuteStep} minutes`;
  else if (minuteValues) perHour = `at minute ${joinWords(minuteValues.map(String))}`;
  else return fallback;
  if (isEvery(hours)) return minuteValues ? `${perHour} of every hour` : perHour;
  const hourStep = everyN(hours);
  if (hourStep !== null) return `${perHour} of every ${hourStep}${ordinalSuffix(hourStep)} hour`;
  const hourSpans: string[] = [];
  for (const item of hours) {
    if (item.low === null || item.step !== null) return fallback;
    hourSpans.push(`from ${pad(item.low)}:00 to ${pad(item.high!)}:59`);
  }
  return `${perHour}${minuteValues ? ' of every hour' : ''} ${joinWords(hourSpans)}`;
}

function ordinalSuffix(n: number): string {
  if (n % 100 >= 11 && n % 100 <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
}

function dayWords(monthDays: Item[] | null, weekDays: Item[] | null, monthDayText: string, weekDayText: string): string {
  const allMonthDays = monthDays !== null && isEvery(monthDays);
  const allWeekDays = weekDays !== null && isEvery(weekDays);
  if (allMonthDays && allWeekDays) return '';
  const monthDayPhrase = allMonthDays ? null : `on day ${(monthDays && listOf(monthDays, String)) ?? monthDayText} of the month`;
  const weekDayPhrase = allWeekDays
    ? null
    : `on ${(weekDays && listOf(weekDays, (d) => DAY_NAMES[d % 7] ?? String(d))) ?? `day-of-week ${weekDayText}`}`;
  // Both restricted: either one matching is enough, unless a field starts with "*" (Vixie cron).
  const joiner = monthDayText.startsWith('*') || weekDayText.startsWith('*') ? ' and ' : ' or ';
  return ` ${[monthDayPhrase, weekDayPhrase].filter((phrase) => phrase !== null).join(joiner)}`;
}
