import type { Arguments } from 'yargs';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { ownEntry } from '../../domain/ownEntry.js';
import { CliError } from './CliError.js';
import type { CliIO } from './CliIO.js';

/**
 * The commands a cron run may not use, by group, aliases included (yargs reports the word that
 * was typed): a scheduled run cannot create, change, schedule or redeliver jobs, however it reaches the
 * command line. Looking (`cron list`, `webhook list` …) stays allowed.
 */
const CHANGING_COMMANDS: Readonly<Record<string, { changes: string; commands: readonly string[] }>> = {
  cron: {
    changes: 'jobs',
    commands: ['create', 'add', 'edit', 'pause', 'disable', 'resume', 'enable', 'run', 'redeliver', 'remove', 'rm', 'delete', 'tick'],
  },
  webhook: { changes: 'webhook subscriptions', commands: ['subscribe', 'remove', 'rm'] },
};

/** Whether `group command` (e.g. `cron create`) changes jobs or subscriptions. */
export function changesJobs(group: string, command: string): boolean {
  return ownEntry(CHANGING_COMMANDS, group)?.commands.includes(command) ?? false;
}

/**
 * A yargs middleware, registered once for every command: inside a cron run (AGENT_CRON_RUN set, or
 * in an ancestor's starting environment) or the agent's sandbox, a command that changes jobs is refused before it loads or touches anything (exit 1).
 */
export function refuseChangesInsideCronRun(io: CliIO): (argv: Arguments) => void {
  return (argv) => {
    if (!io.cronRun && !io.sandboxed) return;
    const [group = '', command = ''] = argv._.map(String);
    if (!changesJobs(group, command)) return;
    if (!io.cronRun) {
      throw new CliError(
        ERROR_CODES.CLI.INSIDE_CRON_RUN,
        `This command changes ${ownEntry(CHANGING_COMMANDS, group)!.changes} and cannot be used from inside the agent's sandbox, where the job store is hidden; ask the agent to use its cronjob tool where it has one.`,
      );
    }
    throw new CliError(
      ERROR_CODES.CLI.INSIDE_CRON_RUN,
      `This command changes ${ownEntry(CHANGING_COMMANDS, group)!.changes} and cannot be used from inside a cron run (job ${io.cronRun}); scheduled runs may not create, change or schedule jobs.`,
    );
  };
}
