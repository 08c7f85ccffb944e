import type { Argv } from 'yargs';
import { closestName } from '../../domain/didYouMean.js';
import { CliUsageError } from './CliUsageError.js';

/**
 * The message every command group gives `demandCommand`: the failure handler recognises it and
 * names the group's commands itself, so that no group keeps a list of its commands by hand.
 */
export const MISSING_COMMAND = 'Name a command.';

/** Where on the command tree yargs stood when it failed: `agent cron` is path ['cron']. */
export interface CommandLevel {
  path: readonly string[];
  /** The commands one can name next (primary names, aliases left out); empty below a leaf. */
  commands: readonly string[];
  /** How the command is written, `agent cron edit <job>`, when yargs knows. */
  usage?: string;
  /** Every name one may type next, aliases included (`ls` beside `list`), for "did you mean". */
  names?: readonly string[];
  /** The flags the command at this level takes, as typed without dashes (`json`, `query-file`, `q`). */
  flags?: readonly string[];
}

interface YargsInternals {
  getInternalMethods(): {
    getContext(): { commands: string[] };
    getUsageInstance(): {
      getCommands(): Array<[string, string, boolean, string[], ...unknown[]]>;
      getUsage(): Array<[string, ...unknown[]]>;
    };
  };
  getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> };
}

/** The first word of a command's usage: `add` of `add [schedule] [prompt]`. */
const nameOf = (usage: string) => usage.split(' ')[0]!;

/**
 * The level yargs is at while it validates. yargs has no public way to ask, so this reads its
 * internals (yargs 17 and 18 alike), here and nowhere else; should they change, the messages
 * lose their list of commands, not their meaning.
 */
export function commandLevelOf(yargs: Argv): CommandLevel {
  try {
    const internals = (yargs as unknown as YargsInternals).getInternalMethods();
    const usageInstance = internals.getUsageInstance();
    const listed = usageInstance.getCommands();
    const commands = listed.map(([usage]) => nameOf(usage)).filter((name) => name !== '$0');
    const aliases = listed.flatMap((entry) => (Array.isArray(entry[3]) ? entry[3].map(nameOf) : []));
    const usage = usageInstance.getUsage()[0]?.[0]?.replace(/^\$0\b/, 'agent');
    return {
      path: [...internals.getContext().commands],
      commands,
      usage,
      names: [...commands, ...aliases],
      flags: flagsOf(yargs as unknown as YargsInternals),
    };
  } catch {
    return { path: [], commands: [] };
  }
}

/** The flags yargs knows at the level it stands on, with their aliases; camelCase spellings left out. */
function flagsOf(yargs: YargsInternals): string[] {
  try {
    const options = yargs.getOptions();
    const names = [...Object.keys(options.key), ...Object.values(options.alias).flat()];
    return [...new Set(names)].filter((name) => !/[A-Z]/.test(name) && name !== '$0');
  } catch {
    return [];
  }
}

/**
 * The likely intent behind a misspelt command or flag: a known name within two edits (one for a
 * word of up to three letters, none for a single letter: `-j` is no typo of `-q`), or the one
 * that a word of four letters or more begins (see closestName). Null when nothing is that close.
 */
export function likelyName(written: string, known: readonly string[]): string | null {
  if (written.length < 2) return null;
  return closestName(written, known, written.length <= 3 ? 1 : 2);
}

/** `agent cron list`, for messages. */
function commandLine(level: CommandLevel): string {
  return ['agent', ...level.path].join(' ');
}

/** `cron ` under `agent cron`, nothing at the top. */
function groupOf(level: CommandLevel): string {
  return level.path.length > 0 ? `${level.path.join(' ')} ` : '';
}

function commandList(level: CommandLevel): string {
  return level.commands.length > 0 ? `; the ${groupOf(level)}commands are: ${level.commands.join(', ')}` : '';
}

/**
 * One sentence for a failure yargs reports (a message of its own, or MISSING_COMMAND): it names
 * what was wrong, lists the commands where a command was missing or unknown, and points to the
 * help of the command concerned.
 */
export function usageErrorFor(message: string, level: CommandLevel, typed: readonly string[] = []): CliUsageError {
  const help = ` (see "${commandLine(level)} --help").`;
  if (message === MISSING_COMMAND) {
    return new CliUsageError(`Name a ${groupOf(level)}command${commandList(level)}${help}`);
  }
  const unknown = /^Unknown commands?: ([^,]+)/.exec(message)?.[1];
  if (unknown !== undefined && level.commands.length > 0) {
    const meant = likelyName(unknown, level.names ?? level.commands);
    if (meant !== null) return new CliUsageError(`Unknown command "${unknown}"; did you mean "${meant}"?${help}`);
    return new CliUsageError(`Unknown command "${unknown}"${commandList(level)}${help}`);
  }
  const flag = unknownFlag(message, typed, level.flags ?? []);
  if (flag !== null) return new CliUsageError(`${flag}${help}`);
  if (unknown !== undefined) {
    return new CliUsageError(`Unknown argument: ${unknown}; "${commandLine(level)}" takes no such argument${help}`);
  }
  if (message.startsWith('Not enough non-option arguments') && level.usage) {
    return new CliUsageError(`Too few arguments; use: ${level.usage}${help}`);
  }
  const oneLine = message.replace(/\s*\n\s*/g, ' ').trim();
  // A sentence of ours (a flag check's) is complete; yargs' fragments ("Unknown argument: jsno",
  // some over several lines) get a pointer to the help.
  return new CliUsageError(oneLine.endsWith('.') ? oneLine : `${oneLine}${help}`);
}

/**
 * "Unknown flag --jsn; did you mean --json?" for yargs' "Unknown argument(s): jsn, …" when the
 * first of them was typed as a flag (`--jsn`, `--no-jsn`, `-j`, `--jsn=x`) and a known flag is
 * close to it; the `--no-` the user typed is kept. Null otherwise (the message stays yargs').
 */
function unknownFlag(message: string, typed: readonly string[], flags: readonly string[]): string | null {
  const name = /^Unknown arguments?: ([^,]+)/.exec(message)?.[1]?.trim();
  if (name === undefined) return null;
  const written = typed.find((word) => new RegExp(`^--?(no-)?${escapeRegExp(name)}(=|$)`).test(word));
  if (written === undefined) return null;
  const [, dashes, negation = ''] = /^(--?)(no-)?/.exec(written)!;
  const meant = likelyName(
    name,
    flags.filter((flag) => flag.length > 1 || dashes === '-'),
  );
  if (meant === null) return null;
  const dash = meant.length === 1 ? '-' : '--';
  return `Unknown flag ${dashes}${negation}${name}; did you mean ${dash}${negation}${meant}?`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
