import type { Arguments } from 'yargs';
import { writeLine, type CliIO } from './CliIO.js';

/**
 * `--tick`, known to every command so that `--no-tick` can be given to any of them (a script that
 * passes it everywhere never meets "Unknown argument"). The commands that run due jobs before
 * their own work (`agent cron …` but `tick`, `agent chat`) describe it again in their help; on
 * the others it has no effect, and `--no-tick` says so on stderr (tickIgnoredWarning).
 */
export const GLOBAL_TICK_OPTION = {
  type: 'boolean',
  default: true,
  describe: 'Run due jobs first, on the commands that do (agent cron …, agent chat); ignored elsewhere',
} as const;

/** Whether `agent <group> <command>` runs due jobs before its own work, so that `--no-tick` means something. */
export function ticksFirst(group: string, command: string): boolean {
  return group === 'chat' || (group === 'cron' && command !== 'tick');
}

/** Why `--no-tick` changes nothing for `agent <words>`, as a warning; null where it does change something. */
export function tickIgnoredWarning(words: readonly string[]): string | null {
  const [group = '', command = ''] = words;
  if (group === '' || ticksFirst(group, command)) return null;
  const line = `"agent ${words.join(' ')}"`;
  if (group === 'cron') return `warning: --no-tick has no effect on ${line}: running the due jobs is what it does.`;
  if (group === 'gateway')
    return `warning: --no-tick has no effect on ${line}: it fires due jobs on their schedule (pause a job to keep it from running).`;
  return `warning: --no-tick has no effect on ${line}: it does not run due jobs.`;
}

/**
 * A yargs middleware, registered once for every command: `--no-tick` on a command that does not
 * tick is accepted, and ignored with one warning line on stderr. `commandWords` gives the
 * command as typed (`webhook ls`), without its arguments.
 */
export function warnWhenTickIsIgnored(io: CliIO, commandWords: () => readonly string[]): (argv: Arguments) => void {
  return (argv) => {
    if (argv.tick !== false) return;
    const warning = tickIgnoredWarning(commandWords());
    if (warning) writeLine(io.stderr, warning);
  };
}
