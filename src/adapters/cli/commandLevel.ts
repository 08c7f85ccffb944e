import type { Argv } from 'yargs';
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
}

interface YargsInternals {
  getInternalMethods(): {
    getContext(): { commands: string[] };
    getUsageInstance(): { getCommands(): Array<[string, ...unknown[]]>; getUsage(): Array<[string, ...unknown[]]> };
  };
}

/**
 * The level yargs is at while it validates. yargs has no public way to ask, so this reads its
 * internals (yargs 17 and 18 alike), here and nowhere else; should they change, the messages
 * lose their list of commands, not their meaning.
 */
export function commandLevelOf(yargs: Argv): CommandLevel {
  try {
    const internals = (yargs as unknown as YargsInternals).getInternalMethods();
    const usageInstance = internals.getUsageInstance();
    const commands = usageInstance.getCommands().map(([usage]) => usage.split(' ')[0]!);
    const usage = usageInstance.getUsage()[0]?.[0]?.replace(/^\$0\b/, 'agent');
    return { path: [...internals.getContext().commands], commands: commands.filter((name) => name !== '$0'), usage };
  } catch {
    return { path: [], commands: [] };
  }
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
export function usageErrorFor(message: string, level: CommandLevel): CliUsageError {
  const help = ` (see "${commandLine(level)} --help").`;
  if (message === MISSING_COMMAND) {
    return new CliUsageError(`Name a ${groupOf(level)}command${commandList(level)}${help}`);
  }
  const unknown = /^Unknown commands?: ([^,]+)/.exec(message)?.[1];
  if (unknown !== undefined && level.commands.length > 0) {
    return new CliUsageError(`Unknown command "${unknown}"${commandList(level)}${help}`);
  }
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
