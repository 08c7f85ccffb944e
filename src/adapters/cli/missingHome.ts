import { statSync } from 'node:fs';
import type { Arguments } from 'yargs';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { JobError, WebhookError } from '../../domain/errors.js';
import { writeLine, type CliIO } from './CliIO.js';

/**
 * The commands that only look, by group, aliases included (yargs reports the word typed). They
 * never create the home; `config check` says it in its own findings.
 */
const LOOKING: Readonly<Record<string, readonly string[] | 'all'>> = {
  cron: ['list', 'ls', 'show', 'runs', 'status'],
  webhook: ['list', 'ls', 'runs'],
  channels: ['list'],
  status: 'all',
  platforms: 'all',
};

/**
 * A yargs middleware, registered once for every command: when the home a command that only looks
 * would read does not exist (a mistyped AGENT_HOME, usually), it says so before the command runs,
 * in one sentence. Asked for one job or one route's runs, that sentence is the error (exit 1);
 * otherwise it is a warning on stderr and the command goes on, finding nothing (exit 0). Nothing
 * is created.
 */
export function sayWhenHomeIsMissing(io: CliIO, home: () => string): (argv: Arguments) => void {
  return (argv) => {
    const [group = '', command = ''] = argv._.map(String);
    const looking = LOOKING[group];
    if (looking === undefined || (looking !== 'all' && !looking.includes(command))) return;
    if (group === 'channels' && argv.refresh === true) return;
    const path = home();
    if (!isMissing(path)) return;
    if (group === 'cron' && (command === 'show' || command === 'runs')) {
      throw new JobError(
        ERROR_CODES.JOB.NOT_FOUND,
        `No job has the id or name "${String(argv.job ?? '')}": the home ${path} does not exist; check AGENT_HOME.`,
      );
    }
    if (group === 'webhook' && command === 'runs' && typeof argv.route === 'string') {
      throw new WebhookError(
        ERROR_CODES.WEBHOOK.ROUTE_NOT_FOUND,
        `No webhook route is named "${argv.route}": the home ${path} does not exist; check AGENT_HOME.`,
      );
    }
    const what = group === 'status' ? 'no gateway runs there and it holds no jobs' : 'nothing is stored there yet';
    writeLine(
      io.stderr,
      `warning: the home ${path} does not exist, so ${what}; check AGENT_HOME (a command that creates something creates it).`,
    );
  };
}

/** Whether nothing is at `path`; a path through a file, or one that cannot be read, is left to the command to report. */
function isMissing(path: string): boolean {
  try {
    statSync(path);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
