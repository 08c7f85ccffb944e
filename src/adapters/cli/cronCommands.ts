import { userInfo } from 'node:os';
import type { Argv } from 'yargs';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import type { Job } from '../../domain/Job.js';
import { jsonFlag, writeJson, writeLine, type CliIO } from './CliIO.js';
import { CliUsageError } from './CliUsageError.js';
import { recordOfJob } from '../../domain/JobRecord.js';
import { isFailedStatus } from '../../domain/RunOutcome.js';
import { MISSING_COMMAND } from './commandLevel.js';
import { everyScheduleSpelling } from '../../domain/Schedule.js';
import { statusText, type StatusApp } from './statusCommand.js';
import { cronRunJson, cronStatusJson, jobRedeliveryJson } from './jsonViews.js';
import { argument, text, wholeNumber } from './flagValues.js';
import { commandInterruption } from './commandInterruption.js';
import type { CronApp } from './cronApp.js';
import { createInput, editInput, JOB_FLAG_OPTIONS, NO_REPEAT } from './cronJobFlags.js';
import { settleAbandonedRuns, tick } from './cronTick.js';
import { jobDetails, jobDetailsJson, runJson, runTable } from './formatJobDetails.js';
import { jobRedeliveryLines } from './formatRedelivery.js';
import { createdLine, jobSummary, jobTable, runLine, unreadableWarning } from './formatJobs.js';

/** How many runs `agent cron runs` lists without --limit. */
const DEFAULT_RUNS_LIMIT = 20;

interface CommonFlags {
  tick: boolean;
  json?: boolean;
}

/**
 * `agent cron …`. Every command but `tick` runs a tick first, as CLI mode fires due jobs when
 * `agent cron` commands run (docs/cron.md), unless `--no-tick` is given.
 */
export function registerCronCommands(yargs: Argv, app: () => Promise<CronApp>, io: CliIO, status: () => Promise<StatusApp>): Argv {
  const tickFirst = async (flags: CommonFlags): Promise<CronApp> => {
    const cron = await app();
    if (flags.tick) await tick(cron, io, null);
    else await settleAbandonedRuns(cron, io);
    return cron;
  };

  return yargs.command('cron', 'Manage and run scheduled jobs', (cron) =>
    cron
      .option('tick', { type: 'boolean', default: true, describe: 'Run due jobs before the command (--no-tick to skip)' })
      .command(
        ['list', 'ls'],
        'Show all jobs',
        (y) => y.option('json', { type: 'boolean', default: false, describe: 'Print the job records as JSON' }),
        async (argv) => {
          const cron = await tickFirst(argv);
          const { jobs, unreadable } = await cron.listJobs.execute();
          for (const problem of unreadable) writeLine(io.stderr, unreadableWarning(problem, cron.paths.jobsFile));
          if (argv.json) writeLine(io.stdout, JSON.stringify(jobs.map(recordOfJob), null, 2));
          else if (jobs.length === 0) writeLine(io.stdout, 'No scheduled jobs.');
          else writeLine(io.stdout, jobTable(jobs, cron.settings.timeZone, io.color));
        },
      )
      .command(
        'show <job>',
        'Show one job in full: every field, its next runs and its last runs',
        (y) =>
          jobPositional(y).option('json', {
            type: 'boolean',
            default: false,
            describe: 'Print the record, next_runs and recent_runs as JSON',
          }),
        async (argv) => {
          const cron = await tickFirst(argv);
          const shown = await cron.showJob.execute({ job: argv.job });
          writeLine(io.stdout, argv.json ? JSON.stringify(jobDetailsJson(shown), null, 2) : jobDetails(shown));
        },
      )
      .command(
        'runs <job>',
        "List a job's runs from the run ledger and its output files, newest first",
        (y) =>
          jobPositional(y)
            .option('json', { type: 'boolean', default: false, describe: 'Print the runs as JSON' })
            .option('limit', {
              type: 'string',
              coerce: wholeNumber('--limit', { min: 1 }),
              describe: 'Show at most this many runs (default 20)',
            }),
        async (argv) => {
          const cron = await tickFirst(argv);
          const { job, runs, timeZone } = await cron.listJobRuns.execute({ job: argv.job, limit: argv.limit ?? DEFAULT_RUNS_LIMIT });
          if (argv.json) writeLine(io.stdout, JSON.stringify(runs.map(runJson), null, 2));
          else if (runs.length === 0) writeLine(io.stdout, `Job ${job.id} '${job.name}' has no recorded runs.`);
          else writeLine(io.stdout, runTable(runs, timeZone));
        },
      )
      .command(
        ['create [schedule] [prompt]', 'add [schedule] [prompt]'],
        'Create a job (asks for the details on a terminal when schedule and prompt are omitted); warns when a target or a skill is not set up yet',
        (y) =>
          y
            .positional('schedule', {
              type: 'string',
              coerce: argument('schedule'),
              describe: `${everyScheduleSpelling()} (m, h, d)`,
            })
            .positional('prompt', {
              type: 'string',
              coerce: argument('prompt'),
              describe: 'Self-contained task for the agent (may be left out with --no-agent)',
            })
            .options(JOB_FLAG_OPTIONS)
            .option('json', jsonFlag("the new job's record")),
        async (argv) => {
          const cron = await tickFirst(argv);
          const input = await createInput(argv, cron, io);
          if (input === null) {
            // Ctrl-C during the questions: nothing was created; the exit status a shell gives SIGINT.
            process.exitCode = 130;
            return;
          }
          const job = await deliverValueChecked(() => cron.createJob.execute(input));
          if (argv.json) writeJson(io.stdout, recordOfJob(job));
          else writeLine(io.stdout, createdLine(job, cron.settings.timeZone));
          await warnAbout(job, cron, io);
        },
      )
      .command(
        'edit <job>',
        'Change a job (named by id or name); warns when a target or a skill is not set up yet',
        (y) =>
          y
            .positional('job', { type: 'string', demandOption: true, coerce: argument('job') })
            .option('schedule', { type: 'string', coerce: text('--schedule'), describe: 'New schedule' })
            .option('prompt', { type: 'string', coerce: text('--prompt'), describe: 'New prompt' })
            .options(JOB_FLAG_OPTIONS)
            .option('repeat', {
              type: 'string',
              coerce: wholeNumber('--repeat', { min: 0, note: '0 means no limit', negation: NO_REPEAT }),
              describe: 'Stop after this many runs in all (a whole number; 0 or --no-repeat = no limit)',
            })
            .option('clear-skills', { type: 'boolean', describe: 'Remove all skills' })
            .option('clear-script', { type: 'boolean', describe: 'Remove the pre-run script' })
            .option('json', jsonFlag("the changed job's record")),
        async (argv) => {
          const changes = editInput(argv);
          const cron = await tickFirst(argv);
          const job = await deliverValueChecked(() => cron.editJob.execute(changes));
          if (argv.json) writeJson(io.stdout, recordOfJob(job));
          else writeLine(io.stdout, `Updated job ${jobSummary(job, cron.settings.timeZone)}.`);
          await warnAbout(job, cron, io);
        },
      )
      .command(
        ['pause <job>', 'disable <job>'],
        'Pause a job (--reason: why)',
        (y) =>
          jobPositional(y)
            .option('reason', { type: 'string', nargs: 1, coerce: text('--reason'), describe: 'Why the job is paused, in one line' })
            .option('json', jsonFlag("the paused job's record")),
        async (argv) => {
          const cron = await tickFirst(argv);
          const job = await cron.pauseJob.execute({ job: argv.job, reason: argv.reason });
          if (argv.json) writeJson(io.stdout, recordOfJob(job));
          else writeLine(io.stdout, `Paused job ${job.id} '${job.name}'${job.paused_reason ? `: ${job.paused_reason}` : ''}.`);
        },
      )
      .command(
        ['resume <job>', 'enable <job>'],
        'Resume a paused job',
        (y) => jobPositional(y).option('json', jsonFlag("the resumed job's record")),
        async (argv) => {
          const cron = await tickFirst(argv);
          const job = await cron.resumeJob.execute({ job: argv.job });
          if (argv.json) writeJson(io.stdout, recordOfJob(job));
          else writeLine(io.stdout, `Resumed job ${jobSummary(job, cron.settings.timeZone)}.`);
        },
      )
      .command(
        'run <job>',
        'Run a job now, in this process (a one-shot before its time only with --force: the run uses it up)',
        (y) =>
          jobPositional(y)
            .option('force', { type: 'boolean', default: false, describe: 'Run a one-shot that is not due yet' })
            .option('json', jsonFlag('the outcome (job, run id, status, answer, deliveries)')),
        async (argv) => {
          // Stopped by a signal, the run's trees are killed and it is recorded interrupted (exit 130, 143 or 129).
          commandInterruption.arm();
          // `agent cron cancel` in another terminal stops the run, and the due jobs the tick runs first.
          const unwatch = (await app()).watchCancels();
          const { job, report } = await (async () => {
            const cron = await tickFirst(argv);
            if (io.interactive) writeLine(io.stderr, `Running job '${argv.job}'…`);
            return cron.runJobNow.execute({ job: argv.job, force: argv.force, signal: commandInterruption.signal });
          })().finally(unwatch);
          if (argv.json) writeJson(io.stdout, cronRunJson(job, report));
          else {
            writeLine(io.stdout, runLine(job, report));
            if (report.response && report.outcome.status !== 'error') writeLine(io.stdout, `\n${report.response}`);
          }
          // A run whose answer never reached its target failed as far as the caller is concerned.
          if (isFailedStatus(report.outcome.status)) process.exitCode = 1;
        },
      )
      .command(
        'cancel <job>',
        'Stop the run under way of a job, on whichever gateway, replica or command runs it (recorded as error "cancelled by <you>")',
        (y) =>
          jobPositional(y)
            .option('wait', { type: 'boolean', default: true, describe: 'Wait up to 10 s for the run to stop (--no-wait: only ask)' })
            .option('json', jsonFlag("the job's record once its run stopped")),
        async (argv) => {
          // No tick first: it would run the due jobs and wait for them before cancelling anything.
          const cron = await app();
          await settleAbandonedRuns(cron, io);
          const asked = await cron.cancelJobRun.execute({ job: argv.job, by: whoIsAsking() });
          const ended = argv.wait ? await cron.cancelJobRun.waitForEnd(asked, CANCEL_WAIT_MS) : 'running';
          if (ended === 'running' && argv.wait) process.exitCode = 1;
          if (argv.json) writeJson(io.stdout, recordOfJob(ended === 'running' || ended === null ? asked : ended));
          else writeLine(argv.wait && ended === 'running' ? io.stderr : io.stdout, cancelLine(asked, ended, argv.wait));
        },
      )
      .command(
        'redeliver <job>',
        "Deliver the recorded answer of one of a job's runs again, without running the agent (default: its latest run with an answer)",
        (y) =>
          jobPositional(y)
            .option('run', {
              type: 'string',
              coerce: text('--run'),
              describe: 'The run\'s id, from "agent cron runs <job> --json" (default: the latest run that has an answer)',
            })
            .option('json', jsonFlag("the outcome (run id, status, each target's delivery)")),
        async (argv) => {
          const cron = await tickFirst(argv);
          const redelivered = await cron.redeliverJobRun.execute({ job: argv.job, run: argv.run ?? null });
          if (argv.json) writeJson(io.stdout, jobRedeliveryJson(redelivered));
          else for (const line of jobRedeliveryLines(redelivered)) writeLine(io.stdout, line);
          // An answer that still did not reach a target is a failure, as for "agent cron run".
          if (redelivered.outcome.status === 'delivery_failed') process.exitCode = 1;
        },
      )
      .command(
        ['remove <job>', 'rm <job>', 'delete <job>'],
        'Delete a job and its output files',
        (y) => jobPositional(y).option('json', jsonFlag("the removed job's record")),
        async (argv) => {
          const cron = await tickFirst(argv);
          const job = await cron.removeJob.execute({ job: argv.job });
          if (argv.json) writeJson(io.stdout, recordOfJob(job));
          else writeLine(io.stdout, `Removed job ${job.id} '${job.name}'.`);
        },
      )
      .command(
        'status',
        'Show the cron part of "agent status": whether a gateway fires the jobs, the next jobs due, the failed ones and the paused ones',
        (y) => y.option('json', jsonFlag('the status')),
        async (argv) => {
          await tickFirst(argv);
          const { showStatus, home, timeZone } = await status();
          const shown = await showStatus.execute();
          if (argv.json) writeJson(io.stdout, cronStatusJson(home, shown));
          else writeLine(io.stdout, statusText(shown, home, timeZone, { webhooks: false }));
        },
      )
      .command(
        'tick',
        'Run the jobs that are due, wait for them and report what ran (nothing when nothing ran, fit for a crontab)',
        (y) =>
          y
            .option('verbose', { type: 'boolean', default: false, describe: 'Also say when nothing ran' })
            .option('json', jsonFlag('the runs it did (an empty list when nothing ran); what else it did goes to stderr'))
            .option('tick', { type: 'boolean', default: true, describe: 'Has no effect: this command is the tick' }),
        async (argv) => {
          commandInterruption.arm();
          const cron = await app();
          const unwatch = cron.watchCancels();
          await tick(cron, io, { verbose: argv.verbose, json: argv.json }).finally(unwatch);
        },
      )
      .demandCommand(1, MISSING_COMMAND),
  );
}

/** How long `agent cron cancel` waits for the run to stop. */
const CANCEL_WAIT_MS = 10_000;

/** Who cancels, as the run's error names them: the user running the command. */
function whoIsAsking(): string {
  try {
    return userInfo().username || 'the command line';
  } catch {
    return 'the command line';
  }
}

/** What `agent cron cancel` says: stopped, still running after the wait, or asked without waiting. */
function cancelLine(asked: Job, ended: Job | null | 'running', waited: boolean): string {
  const job = `job ${asked.id} '${asked.name}'`;
  if (!waited)
    return `Asked for the run of ${job} to stop; it is recorded as "${asked.claim?.cancel ? `cancelled by ${asked.claim.cancel.by}` : 'cancelled'}".`;
  if (ended === 'running') {
    return `Asked for the run of ${job} to stop, but it still runs after ${CANCEL_WAIT_MS / 1000} s; ${asked.claim?.by ?? 'the process running it'} stops it when it next looks at the store (or is no longer running).`;
  }
  return `Cancelled the run of ${job}${ended?.last_error ? `: ${ended.last_error}` : ''}.`;
}

/** What would keep the job from doing what it says, on stderr; the job is saved all the same. */
async function warnAbout(job: Job, cron: CronApp, io: CliIO): Promise<void> {
  for (const warning of await cron.jobWarnings.about(job)) writeLine(io.stderr, `warning: ${warning}`);
}

/** A `--deliver` value that names no target is a bad flag value: a usage error, like any other. */
async function deliverValueChecked(change: () => Promise<Job>): Promise<Job> {
  try {
    return await change();
  } catch (error) {
    if (error instanceof AppError && error.code === ERROR_CODES.DELIVERY.INVALID) throw new CliUsageError(error.message);
    throw error;
  }
}

function jobPositional(y: Argv<CommonFlags>) {
  return y.positional('job', { type: 'string', demandOption: true, coerce: argument('job'), describe: 'Job id or name' });
}
