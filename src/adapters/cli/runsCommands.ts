import type { Argv } from 'yargs';
import type { ShowRun } from '../../application/runs/ShowRun.js';
import { jsonFlag, writeJson, writeLine, type CliIO } from './CliIO.js';
import { CliUsageError } from './CliUsageError.js';
import { MISSING_COMMAND } from './commandLevel.js';
import { argument } from './flagValues.js';
import { runShowLines } from './formatRunTranscript.js';

/** What `agent runs` needs. */
export interface RunsApp {
  showRun: ShowRun;
  timeZone: string;
}

/** `agent runs show <run id>`: one run of the run ledger, cron or webhook, with its transcript (docs/runs.md). */
export function registerRunsCommands(yargs: Argv, app: () => Promise<RunsApp>, io: CliIO): Argv {
  return yargs.command('runs', 'Look at one run of the run ledger (cron or webhook), with what the agent did', (runs) =>
    runs
      .command(
        'show <run>',
        'Show a run and its transcript: every model turn, tool call and tool result, with their times',
        (y) =>
          y
            .positional('run', {
              type: 'string',
              demandOption: true,
              coerce: argument('run'),
              describe:
                'The run\'s id: `id` in "agent cron runs <job> --json" and "agent webhook runs --json", `run_id` in "agent cron run --json"',
            })
            .option('json', jsonFlag('the run record with its `transcript` (null when it has none)')),
        async (argv) => {
          if (argv.run.trim() === '')
            throw new CliUsageError('Give the id of the run to show, as "agent cron runs <job> --json" lists it.');
          const runsApp = await app();
          const shown = await runsApp.showRun.execute({ id: argv.run });
          if (argv.json) writeJson(io.stdout, { ...shown.run, transcript: shown.transcript });
          else for (const line of runShowLines(shown, runsApp.timeZone)) writeLine(io.stdout, line);
        },
      )
      .demandCommand(1, MISSING_COMMAND),
  );
}
