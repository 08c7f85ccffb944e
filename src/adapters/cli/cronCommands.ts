import type { Argv } from 'yargs';
import type { CreateJob, CreateJobInput } from '../../application/cron/CreateJob.js';
import type { EditJob, EditJobInput } from '../../application/cron/EditJob.js';
import type { JobWarnings } from '../../application/cron/JobWarnings.js';
import type { ListJobRuns } from '../../application/cron/ListJobRuns.js';
import type { ListJobs } from '../../application/cron/ListJobs.js';
import type { PauseJob } from '../../application/cron/PauseJob.js';
import type { RedeliverJobRun } from '../../application/cron/RedeliverJobRun.js';
import type { RemoveJob } from '../../application/cron/RemoveJob.js';
import type { ResumeJob } from '../../application/cron/ResumeJob.js';
import type { RunDueJobs } from '../../application/cron/RunDueJobs.js';
import type { RunJobNow } from '../../application/cron/RunJobNow.js';
import type { ShowJob } from '../../application/cron/ShowJob.js';
import type { AgentPaths, CronSettings } from '../../application/ports/Settings.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import { CATCH_UP_POLICIES, validateJobTimeZone, type CatchUp, type Job } from '../../domain/Job.js';
import { jsonFlag, writeJson, writeLine, type CliIO } from './CliIO.js';
import { CliUsageError } from './CliUsageError.js';
import { recordOfJob } from '../../domain/JobRecord.js';
import { MISSING_COMMAND } from './commandLevel.js';
import { CRON_MACROS } from '../../domain/Schedule.js';
import { statusText, type StatusApp } from './statusCommand.js';
import { cronRunJson, cronStatusJson, jobRedeliveryJson } from './jsonViews.js';
import { argument, oneOf, repeatableText, text, wholeNumber } from './flagValues.js';
import { cliFiringPath, type StartCliFiring } from './cliFiring.js';
import { settleAbandoned } from './implicitTick.js';
import { commandInterruption } from './commandInterruption.js';
import { jobDetails, jobDetailsJson, runJson, runTable } from './formatJobDetails.js';
import { jobRedeliveryLines } from './formatRedelivery.js';
import {
  createdLine,
  jobSummary,
  jobTable,
  runLine,
  tickLines,
  unreadableWarning,
} from './formatJobs.js';

/** What the cron commands need, built on first use by the composition root. */
export interface CronApp {
  settings: CronSettings;
  paths: AgentPaths;
  createJob: CreateJob;
  editJob: EditJob;
  jobWarnings: JobWarnings;
  listJobs: ListJobs;
  pauseJob: PauseJob;
  resumeJob: ResumeJob;
  removeJob: RemoveJob;
  runJobNow: RunJobNow;
  runDueJobs: RunDueJobs;
  /** Starts firing due jobs the one way every process does (the implicit tick's look). */
  startFiring: StartCliFiring;
  showJob: ShowJob;
  listJobRuns: ListJobRuns;
  redeliverJobRun: RedeliverJobRun;
}

/** How many runs `agent cron runs` lists without --limit. */
const DEFAULT_RUNS_LIMIT = 20;

interface CommonFlags {
  tick: boolean;
  json?: boolean;
}

/** The job flags as the commands receive them: `null` where a `--no-` form stands for "none". */
interface JobFlags {
  name?: string;
  deliver?: string;
  skill?: string[];
  script?: string | null;
  repeat?: number | null;
  model?: string | null;
  provider?: string | null;
  tz?: string | null;
  catchUp?: CatchUp;
  /** false for `--no-agent`: the job runs only its script. */
  agent?: boolean;
}

/** `--no-repeat`, on `create` and `edit` alike: no limit on the number of runs. */
const NO_REPEAT = { value: null, means: 'no limit' };

/**
 * The flags `create` and `edit` share, with what each `--no-<flag>` means
 * (docs/cron.md#flags-left-out-emptied-or-negated); the others refuse theirs, and every one
 * refuses an empty value.
 */
const JOB_FLAG_OPTIONS = {
  name: { type: 'string', coerce: text('--name'), describe: 'Display name (default: the start of the prompt)' },
  deliver: {
    type: 'string',
    coerce: text('--deliver', { value: 'local', means: 'answers stay in the output files' }),
    describe: 'Where answers go: origin, local, telegram:<chat_id>, … (comma-separated for several; --no-deliver = local)',
  },
  skill: {
    type: 'string',
    alias: 'skills',
    coerce: repeatableText('--skill', { value: [] as string[], means: 'no skills' }),
    describe: 'Skill to load, in order (repeatable; --no-skills for none)',
  },
  script: {
    type: 'string',
    coerce: text('--script', { value: null, means: 'no script' }),
    describe: 'Pre-run script, relative to $AGENT_HOME/scripts (--no-script for none)',
  },
  repeat: {
    type: 'string',
    coerce: wholeNumber('--repeat', { min: 1, negation: NO_REPEAT }),
    describe: 'Stop after this many runs (a whole number; --no-repeat = no limit)',
  },
  model: {
    type: 'string',
    coerce: text('--model', { value: null, means: 'the model from config.yaml' }),
    describe: 'Model for this job (overrides config; --no-model uses config)',
  },
  provider: {
    type: 'string',
    coerce: text('--provider', { value: null, means: 'the provider from config.yaml' }),
    describe: 'Provider for this job (overrides config; --no-provider uses config)',
  },
  tz: {
    type: 'string',
    coerce: text('--tz', { value: null, means: 'the configured time zone' }),
    describe: 'IANA time zone its cron expression and times without an offset are read in, e.g. America/New_York (overrides config; --no-tz uses config)',
  },
  'catch-up': {
    type: 'string',
    coerce: oneOf('--catch-up', CATCH_UP_POLICIES),
    describe: 'What an overdue slot of this recurring job does: once (run it once) or skip (wait for the next slot); default: cron.catch_up',
  },
  agent: {
    type: 'boolean',
    describe: 'Run the agent (the default); --no-agent runs only the --script and delivers its output',
  },
} as const;

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
        (y) => jobPositional(y).option('json', { type: 'boolean', default: false, describe: 'Print the record, next_runs and recent_runs as JSON' }),
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
            .option('limit', { type: 'string', coerce: wholeNumber('--limit', { min: 1 }), describe: 'Show at most this many runs (default 20)' }),
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
              describe: `"every 30m", "0 9 * * 1-5", ${Object.keys(CRON_MACROS).map((macro) => `"${macro}"`).join(', ')}, "2027-01-15T14:00", "30m" or "in 30m" (m, h, d)`,
            })
            .positional('prompt', { type: 'string', coerce: argument('prompt'), describe: 'Self-contained task for the agent (may be left out with --no-agent)' })
            .options(JOB_FLAG_OPTIONS)
            .option('json', jsonFlag('the new job\'s record')),
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
            .option('json', jsonFlag('the changed job\'s record')),
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
            .option('json', jsonFlag('the paused job\'s record')),
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
        (y) => jobPositional(y).option('json', jsonFlag('the resumed job\'s record')),
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
          const cron = await tickFirst(argv);
          if (io.interactive) writeLine(io.stderr, `Running job '${argv.job}'…`);
          const { job, report } = await cron.runJobNow.execute({ job: argv.job, force: argv.force, signal: commandInterruption.signal });
          if (argv.json) writeJson(io.stdout, cronRunJson(job, report));
          else {
            writeLine(io.stdout, runLine(job, report));
            if (report.response && report.outcome.status !== 'error') writeLine(io.stdout, `\n${report.response}`);
          }
          // A run whose answer never reached its target failed as far as the caller is concerned.
          if (['error', 'blocked_config', 'delivery_failed'].includes(report.outcome.status)) process.exitCode = 1;
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
            .option('json', jsonFlag('the outcome (run id, status, each target\'s delivery)')),
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
        (y) => jobPositional(y).option('json', jsonFlag('the removed job\'s record')),
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
          await tick(await app(), io, { verbose: argv.verbose, json: argv.json });
        },
      )
      .demandCommand(1, MISSING_COMMAND),
  );
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

/**
 * Runs one tick. `explicit` (agent cron tick) reports what ran to stdout, and only with
 * `verbose` that nothing ran: from a crontab, any output is mailed. Otherwise (the tick before
 * another command) the report goes to stderr.
 */
/** `--no-tick`: no due job runs, but the runs whose process is gone are recorded so (settleAbandoned). */
async function settleAbandonedRuns(cron: CronApp, io: CliIO): Promise<void> {
  const claims = await settleAbandoned(cron.runDueJobs, io, cron.paths.cronDir);
  if (claims) for (const line of tickLines({ lockBusy: false, ran: [], missed: [], skipped: [], recovered: claims.recovered })) writeLine(io.stderr, line);
}

async function tick(cron: CronApp, io: CliIO, explicit: { verbose: boolean; json: boolean } | null): Promise<void> {
  const onRunStart = (job: { id: string; name: string }) => {
    // A run under way: a stop signal must end what it starts and record it (commandInterruption).
    commandInterruption.arm();
    if (io.interactive) writeLine(io.stderr, `Running due job ${job.id} '${job.name}'…`);
  };
  const signal = commandInterruption.signal;
  if (!explicit) {
    // One look through the built-in ticker; what it did goes to stderr (see cliFiringPath).
    const fire = cliFiringPath(cron.runDueJobs, io, { input: { onRunStart, signal }, storeDir: cron.paths.cronDir });
    await (await cron.startFiring({ kind: 'once' }, fire)).stop();
    return;
  }
  const report = await cron.runDueJobs.execute({ onRunStart, signal });
  if (explicit.json) {
    // The runs are the document; what else the tick found (missed, skipped, recovered) is said on stderr.
    if (report.lockBusy && explicit.verbose) writeLine(io.stderr, 'Another tick is in progress; nothing was run.');
    for (const line of tickLines({ ...report, ran: [] })) writeLine(io.stderr, line);
    writeJson(io.stdout, report.ran.map((run) => cronRunJson(run.job, run.report)));
    return;
  }
  if (report.lockBusy) {
    if (explicit.verbose) writeLine(io.stdout, 'Another tick is in progress; nothing was run.');
    return;
  }
  const lines = tickLines(report);
  for (const line of lines) writeLine(io.stdout, line);
  if (lines.length === 0 && explicit.verbose) writeLine(io.stdout, 'No jobs were due.');
}

async function createInput(
  argv: JobFlags & { schedule?: string; prompt?: string },
  cron: CronApp,
  io: CliIO,
): Promise<CreateJobInput | null> {
  const flags = {
    name: argv.name ?? null,
    deliver: argv.deliver ?? null,
    skills: argv.skill ?? [],
    script: argv.script ?? null,
    repeat: argv.repeat ?? null,
    model: argv.model ?? null,
    provider: argv.provider ?? null,
    timezone: argv.tz ?? null,
    catch_up: argv.catchUp ?? null,
    no_agent: argv.agent === false,
  };
  if (flags.no_agent && flags.script === null) {
    throw new CliUsageError('--no-agent runs the pre-run script instead of the agent, and no script was given; add --script <file> or leave --no-agent out.');
  }
  if (argv.schedule !== undefined && (argv.prompt !== undefined || flags.no_agent)) {
    // A job without the agent needs no prompt: nobody reads it.
    return { ...flags, schedule: argv.schedule, prompt: argv.prompt ?? '' };
  }
  if (argv.schedule !== undefined) {
    throw new CliUsageError('A job needs a schedule and a prompt: agent cron create "<schedule>" "<prompt>".');
  }
  if (!io.interactive) {
    throw new CliUsageError(
      'No schedule or prompt given and no terminal to ask on; run: agent cron create "<schedule>" "<prompt>".',
    );
  }
  // Loaded only when there is someone to ask, so other commands do not load readline.
  const { askForJob } = await import('./askForJob.js');
  // The schedule asked for is read in the job's zone, which must be valid before anything is asked.
  const answers = await askForJob(io, validateJobTimeZone(flags.timezone) ?? cron.settings.timeZone);
  if (answers === null) return null;
  return { ...flags, ...answers, name: answers.name ?? flags.name, deliver: answers.deliver ?? flags.deliver };
}

function editInput(
  argv: JobFlags & { job: string; schedule?: string; prompt?: string; clearSkills?: boolean; clearScript?: boolean },
): EditJobInput {
  if (argv.clearSkills && argv.skill?.length) throw new CliUsageError('Give either --skill or --clear-skills, not both.');
  if (argv.clearScript && argv.script) throw new CliUsageError('Give either --script or --clear-script, not both.');
  const input: EditJobInput = { job: argv.job };
  if (argv.schedule !== undefined) input.schedule = argv.schedule;
  if (argv.prompt !== undefined) input.prompt = argv.prompt;
  if (argv.name !== undefined) input.name = argv.name;
  if (argv.deliver !== undefined) input.deliver = argv.deliver;
  if (argv.skill !== undefined) input.skills = argv.skill;
  if (argv.clearSkills) input.skills = [];
  if (argv.script !== undefined) input.script = argv.script;
  if (argv.clearScript) input.script = null;
  if (argv.repeat !== undefined) input.repeat = argv.repeat === 0 ? null : argv.repeat;
  if (argv.model !== undefined) input.model = argv.model;
  if (argv.provider !== undefined) input.provider = argv.provider;
  if (argv.tz !== undefined) input.timezone = argv.tz;
  if (argv.catchUp !== undefined) input.catch_up = argv.catchUp;
  if (argv.agent !== undefined) input.no_agent = !argv.agent;
  if (Object.keys(input).length === 1) {
    throw new CliUsageError(
      'Nothing to change: give at least one of --schedule, --prompt, --name, --deliver, --skill, --clear-skills, --script, --clear-script, --repeat, --model, --provider, --tz, --catch-up or --agent/--no-agent (see "agent cron edit --help").',
    );
  }
  return input;
}
