import { CliUsageError } from './CliUsageError.js';

/**
 * Checks of flag values, for yargs' `coerce`: each says in one sentence which flag, what was
 * given and what is expected, and yargs passes the CliUsageError on to the command line's
 * failure handler (exit 2). A number flag is declared `type: 'string'` so the check sees exactly
 * what was typed: yargs' `number` type turns "abc" into NaN before any check could quote it.
 */

/** What a flag given once arrives as; given twice, yargs hands over an array. */
function singleValue(flag: string, value: unknown): string {
  if (Array.isArray(value)) throw new CliUsageError(`${flag} was given ${value.length} times; give it once.`);
  return String(value ?? '').trim();
}

export interface WholeNumberRule {
  /** The smallest value accepted. */
  min: number;
  /** Added to the expectation, e.g. "0 means no limit". */
  note?: string;
}

/** A `coerce` for a whole-number flag of `min` or more: "3" → 3; "abc", "2.5", "-1" → one sentence. */
export function wholeNumber(flag: string, rule: WholeNumberRule): (value: unknown) => number {
  return (value) => {
    const text = singleValue(flag, value);
    const number = /^[+]?\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(number) || number < rule.min) {
      const note = rule.note ? ` (${rule.note})` : '';
      const given = text === '' ? 'nothing' : `"${text}"`;
      throw new CliUsageError(`${flag} must be a whole number of ${rule.min} or more${note}, not ${given}.`);
    }
    return number;
  };
}

/** A `coerce` for a flag whose value is one of `choices` (yargs' own message spans three lines). */
export function oneOf<T extends string>(flag: string, choices: readonly T[]): (value: unknown) => T {
  return (value) => {
    const text = singleValue(flag, value);
    if ((choices as readonly string[]).includes(text)) return text as T;
    throw new CliUsageError(`${flag} must be one of ${choices.join(', ')}, not ${text === '' ? 'nothing' : `"${text}"`}.`);
  };
}

/**
 * A `coerce` for a repeatable flag: every value given, in order, as a list. The flag is declared a
 * plain string, not a yargs array, so that it takes one word each time and never swallows the
 * positionals after it (`--skill triage "every 1h" "Check"`).
 */
export function repeatable(value: unknown): string[] {
  return (Array.isArray(value) ? value : [value]).map((each) => String(each ?? ''));
}
