import { durationSeconds } from '../../domain/durations.js';
import { CliUsageError } from './CliUsageError.js';

/**
 * Checks of flag values, for yargs' `coerce`: each says in one sentence which flag, what was
 * given and what is expected, and yargs passes the CliUsageError on to the command line's
 * failure handler (exit 2). A number flag is declared `type: 'string'` so the check sees exactly
 * what was typed: yargs' `number` type turns "abc" into NaN before any check could quote it.
 */

/**
 * yargs reads `--no-<flag>` as the flag set to `false`, whatever the flag's type: a flag whose
 * `--no-` form means nothing refuses it in one sentence rather than taking "false" as its value.
 */
function negationRefused(flag: string): CliUsageError {
  return new CliUsageError(`${negationOf(flag)} is not an option; give ${flag} a value or leave it out.`);
}

/** `--deliver` → `--no-deliver`, `-q` → `--no-q`. */
function negationOf(flag: string): string {
  return `--no-${flag.replace(/^-+/, '')}`;
}

/** What a flag given once arrives as; given twice, yargs hands over an array. */
function singleValue(flag: string, value: unknown): string {
  if (Array.isArray(value)) throw new CliUsageError(`${flag} was given ${value.length} times; give it once.`);
  if (value === false) throw negationRefused(flag);
  return String(value ?? '').trim();
}

/** What `--no-<flag>` stands for, for a flag where it means something. */
export interface Negation<N> {
  /** The value the command receives for `--no-<flag>`. */
  value: N;
  /** What it means, for the sentence refusing an empty value: "answers stay local". */
  means: string;
}

function emptyValue(flag: string, negation: Negation<unknown> | undefined): CliUsageError {
  const instead = negation ? `, or give ${negationOf(flag)} (${negation.means})` : ' or leave the flag out';
  return new CliUsageError(`${flag} needs a value; give one${instead}.`);
}

/**
 * A `coerce` for a flag that takes a text: the text as given. An empty (or blank) value is
 * refused, as is `--no-<flag>` unless `negation` says what it means.
 */
export function text(flag: string): (value: unknown) => string;
export function text<N>(flag: string, negation: Negation<N>): (value: unknown) => string | N;
export function text<N>(flag: string, negation?: Negation<N>): (value: unknown) => string | N {
  return (value) => {
    if (value === false && negation) return negation.value;
    if (singleValue(flag, value) === '') throw emptyValue(flag, negation);
    return String(value);
  };
}

/**
 * A `coerce` for a positional argument, which yargs also fills from `--<name>` and `--no-<name>`
 * when the argument itself is left out: the text as given (whether it may be empty is the
 * command's business), `--no-<name>` or the flag given twice refused.
 */
export function argument(name: string): (value: unknown) => string {
  return (value) => {
    if (value === false) throw new CliUsageError(`--no-${name} is not an option; give the ${name} as an argument.`);
    if (Array.isArray(value)) throw new CliUsageError(`The ${name} was given ${value.length} times; give it once.`);
    return String(value);
  };
}

/**
 * A `coerce` for a repeatable text flag: every value given, in order; `--no-<flag>` stands for
 * `negation` (given alone) or is refused, and so is an empty value.
 */
export function repeatableText(flag: string): (value: unknown) => string[];
export function repeatableText<N>(flag: string, negation: Negation<N>): (value: unknown) => string[] | N;
export function repeatableText<N>(flag: string, negation?: Negation<N>): (value: unknown) => string[] | N {
  return (value) => {
    const values = repeatable(value);
    if ((Array.isArray(value) ? value : [value]).includes(false)) {
      if (!negation) throw negationRefused(flag);
      if (values.length > 1) throw new CliUsageError(`Give either ${flag} or ${negationOf(flag)}, not both.`);
      return negation.value;
    }
    if (values.some((each) => each.trim() === '')) throw emptyValue(flag, negation);
    return values;
  };
}

export interface WholeNumberRule<N> {
  /** The smallest value accepted. */
  min: number;
  /** Added to the expectation, e.g. "0 means no limit". */
  note?: string;
  /** What `--no-<flag>` stands for; without it, `--no-<flag>` is refused. */
  negation?: Negation<N>;
}

/** A `coerce` for a whole-number flag of `min` or more: "3" → 3; "abc", "2.5", "-1" → one sentence. */
export function wholeNumber(flag: string, rule: WholeNumberRule<never>): (value: unknown) => number;
export function wholeNumber<N>(flag: string, rule: WholeNumberRule<N> & { negation: Negation<N> }): (value: unknown) => number | N;
export function wholeNumber<N>(flag: string, rule: WholeNumberRule<N>): (value: unknown) => number | N {
  return (value) => {
    if (value === false && rule.negation) return rule.negation.value;
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
 * Every value of a repeatable flag, in order, as a list. The flag is declared a plain string, not
 * a yargs array, so that it takes one word each time and never swallows the positionals after it
 * (`--skill triage "every 1h" "Check"`).
 */
function repeatable(value: unknown): string[] {
  return (Array.isArray(value) ? value : [value]).map((each) => String(each ?? ''));
}

/** A `coerce` for an amount of US dollars above 0: "0.5" and "$0.50" → 0.5; `--no-<flag>` stands for `negation`. */
export function dollars<N>(flag: string, negation: Negation<N>): (value: unknown) => number | N {
  return (value) => {
    if (value === false) return negation.value;
    const text = singleValue(flag, value);
    const amount = /^\$?\d+(?:\.\d+)?$|^\$?\.\d+$/.test(text) ? Number(text.replace('$', '')) : Number.NaN;
    if (!Number.isFinite(amount) || amount <= 0) {
      throw new CliUsageError(
        `${flag} must be an amount of US dollars above 0 such as 0.50, not ${text === '' ? 'nothing' : `"${text}"`}.`,
      );
    }
    return amount;
  };
}

/**
 * A `coerce` for a flag that takes a length of time (`90s`, `10m`, `1h30m`): its seconds;
 * `--no-<flag>` stands for `negation`.
 */
export function seconds<N>(flag: string, negation: Negation<N>): (value: unknown) => number | N {
  return (value) => {
    if (value === false) return negation.value;
    const text = singleValue(flag, value);
    if (text === '') throw emptyValue(flag, negation);
    const length = durationSeconds(text);
    if (typeof length === 'string') throw new CliUsageError(`${flag} "${text}" is not a length of time: ${length}.`);
    return length;
  };
}
