/**
 * The job flags of `agent cron create` and `agent cron edit`, and how each command's flags (or,
 * on a terminal, the answers to its questions) become the job to create or the changes to make.
 */
import type { CreateJobInput } from '../../application/cron/CreateJob.js';
import type { EditJobInput } from '../../application/cron/EditJob.js';
import { CATCH_UP_POLICIES, validateJobTimeZone, type CatchUp } from '../../domain/Job.js';
import type { CliIO } from './CliIO.js';
import { CliUsageError } from './CliUsageError.js';
import type { CronApp } from './cronApp.js';
import { dollars, oneOf, repeatableText, seconds, text, wholeNumber } from './flagValues.js';
import type { JobChanges } from '../../domain/Job.js';
import type { RetryPolicy } from '../../domain/retries.js';
import { OVERLAP_POLICIES, type Overlap } from '../../domain/jobCatchUp.js';

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
  toolset?: string[];
  clearToolsets?: boolean;
  /** null for `--no-workdir`: the workspace. */
  workdir?: string | null;
  contextFrom?: string[];
  continue?: boolean;
  /** `job[:ok|failed|any]` links; `[]` for `--no-after`. */
  after?: string[];
  /** null for `--no-max-…`: the limit of `agent.budget` again. */
  maxTurns?: number | null;
  maxTokens?: number | null;
  maxCost?: number | null;
  maxCostPerDay?: number | null;
  /** Seconds; null for `--no-timeout`. */
  timeout?: number | null;
  /** Attempts after the first; 0 for `--no-retry`. */
  retry?: number;
  retryBackoff?: number;
  retryMax?: number;
  overlap?: Overlap;
}

/** `--no-max-…`: the job sets no limit of its own. */
const NO_LIMIT = { value: null, means: "agent.budget's limit, if any" };

/** `--no-repeat`, on `create` and `edit` alike: no limit on the number of runs. */
export const NO_REPEAT = { value: null, means: 'no limit' };

/**
 * The flags `create` and `edit` share, with what each `--no-<flag>` means
 * (docs/cron.md#flags-left-out-emptied-or-negated); the others refuse theirs, and every one
 * refuses an empty value.
 */
export const JOB_FLAG_OPTIONS = {
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
    describe:
      'IANA time zone its cron expression and times without an offset are read in, e.g. America/New_York (overrides config; --no-tz uses config)',
  },
  'catch-up': {
    type: 'string',
    coerce: oneOf('--catch-up', CATCH_UP_POLICIES),
    describe:
      'What an overdue slot of this recurring job does: once (run it once) or skip (wait for the next slot); default: cron.catch_up',
  },
  agent: {
    type: 'boolean',
    describe: 'Run the agent (the default); --no-agent runs only the --script and delivers its output',
  },
  toolset: {
    type: 'string',
    alias: 'toolsets',
    coerce: repeatableText('--toolset'),
    describe: 'Toolset its runs get instead of the agent-cron preset (repeatable: terminal, web, clarify, …; cronjob is never given)',
  },
  'clear-toolsets': { type: 'boolean', describe: 'Give its runs the agent-cron preset (the default)' },
  workdir: {
    type: 'string',
    coerce: text('--workdir', { value: null, means: 'the workspace' }),
    describe:
      'Folder its terminal commands and pre-run script run in, writable in the sandbox; its AGENTS.md is given to the agent (absolute, or relative to $AGENT_HOME/workspace; must exist; --no-workdir = the workspace)',
  },
  'context-from': {
    type: 'string',
    coerce: repeatableText('--context-from', { value: [] as string[], means: 'no other job' }),
    describe: 'Job (id or name) whose last ok answer each run is given, cut to 8 KB (repeatable; --no-context-from for none)',
  },
  after: {
    type: 'string',
    coerce: repeatableText('--after', { value: [] as string[], means: 'no other job' }),
    describe:
      'Run when a run of this job (id or name) ends: <job>[:ok|:failed|:any], ok by default; given its run id, status and answer (repeatable; --no-after for none; create without a schedule: only after it)',
  },
  continue: { type: 'boolean', describe: "Give each run this job's own last ok answer, cut to 8 KB (--no-continue: a fresh session only)" },
  'max-turns': {
    type: 'string',
    coerce: wholeNumber('--max-turns', { min: 1, negation: NO_LIMIT }),
    describe: 'Stop a run that has made this many model turns and would make another (--no-max-turns: agent.budget)',
  },
  'max-tokens': {
    type: 'string',
    coerce: wholeNumber('--max-tokens', { min: 1, negation: NO_LIMIT }),
    describe: 'Stop a run once its input and output tokens reach this many (--no-max-tokens: agent.budget)',
  },
  'max-cost': {
    type: 'string',
    coerce: dollars('--max-cost', NO_LIMIT),
    describe: 'Stop a run once it has cost this many US dollars at models.prices (--no-max-cost: agent.budget)',
  },
  'max-cost-per-day': {
    type: 'string',
    coerce: dollars('--max-cost-per-day', NO_LIMIT),
    describe: "Do not start a run while the job's runs of the last 24 h cost this many US dollars (--no-max-cost-per-day: none)",
  },
  timeout: {
    type: 'string',
    coerce: seconds('--timeout', { value: null, means: 'no time limit' }),
    describe:
      'Longest a run may take, e.g. 10m or 1h30m: past it, the run and everything it started are stopped and it is recorded as error "timed out after …" (--no-timeout: no limit)',
  },
  retry: {
    type: 'string',
    coerce: wholeNumber('--retry', { min: 0, negation: { value: 0, means: 'no retries' } }),
    describe:
      'Run a run that failed for a reason that may pass (the model rate limited, overloaded or unreachable, a timeout) again, up to this many times (default: cron.retry; --no-retry: never)',
  },
  'retry-backoff': {
    type: 'string',
    coerce: seconds('--retry-backoff', { value: undefined, means: 'the default, 30s' }),
    describe: 'The wait before the first retry, doubled before each next one, ±10 % (default 30s)',
  },
  overlap: {
    type: 'string',
    coerce: oneOf('--overlap', OVERLAP_POLICIES),
    describe:
      'What a slot of this recurring job does while its run before still runs: skip (record it skipped, the default), queue (run once as soon as that run ends) or allow (run beside it, within cron.max_parallel_jobs)',
  },
  'retry-max': {
    type: 'string',
    coerce: seconds('--retry-max', { value: undefined, means: 'the default, 1h' }),
    describe: 'The longest wait between two attempts (default 1h)',
  },
} as const;

/** The retry flags given, as settings to change; undefined when none was given. */
function retryFlags(argv: JobFlags): Partial<RetryPolicy> | undefined {
  const given = {
    ...(argv.retry !== undefined ? { times: argv.retry } : {}),
    ...(argv.retryBackoff !== undefined ? { backoff_seconds: argv.retryBackoff } : {}),
    ...(argv.retryMax !== undefined ? { max_seconds: argv.retryMax } : {}),
  };
  return Object.keys(given).length > 0 ? given : undefined;
}

/** The budget flags given, as limits to set (null: the job's no more); undefined when none was given. */
function budgetFlags(argv: JobFlags): JobChanges['budget'] | undefined {
  const given = {
    ...(argv.maxTurns !== undefined ? { max_turns: argv.maxTurns } : {}),
    ...(argv.maxTokens !== undefined ? { max_tokens: argv.maxTokens } : {}),
    ...(argv.maxCost !== undefined ? { max_cost: argv.maxCost } : {}),
    ...(argv.maxCostPerDay !== undefined ? { max_cost_per_day: argv.maxCostPerDay } : {}),
  };
  return Object.keys(given).length > 0 ? given : undefined;
}

/** The job `agent cron create` makes from its arguments and flags, or from the answers asked on a terminal; null: the questions were interrupted. */
export async function createInput(
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
    ...perJobFlags(argv),
    budget: budgetFlags(argv) ?? null,
    timeout_seconds: argv.timeout ?? null,
    retry: retryFlags(argv) ?? null,
    overlap: argv.overlap ?? null,
    ...(argv.after?.length ? { after: argv.after } : {}),
  };
  if (flags.retry && flags.retry.times === undefined) {
    throw new CliUsageError('--retry-backoff and --retry-max say how a job retries; give --retry <n> too, the number of retries.');
  }
  if (flags.no_agent && flags.script === null) {
    throw new CliUsageError(
      '--no-agent runs the pre-run script instead of the agent, and no script was given; add --script <file> or leave --no-agent out.',
    );
  }
  if (argv.after?.length && argv.schedule !== undefined && argv.prompt === undefined && !flags.no_agent) {
    // `create --after <job> "<prompt>"`: a job that runs only after other jobs.
    return { ...flags, schedule: '', prompt: argv.schedule };
  }
  if (argv.schedule !== undefined && (argv.prompt !== undefined || flags.no_agent)) {
    // A job without the agent needs no prompt: nobody reads it.
    return { ...flags, schedule: argv.schedule, prompt: argv.prompt ?? '' };
  }
  if (argv.schedule !== undefined) {
    throw new CliUsageError('A job needs a schedule and a prompt: agent cron create "<schedule>" "<prompt>".');
  }
  if (!io.interactive) {
    throw new CliUsageError('No schedule or prompt given and no terminal to ask on; run: agent cron create "<schedule>" "<prompt>".');
  }
  // Loaded only when there is someone to ask, so other commands do not load readline.
  const { askForJob } = await import('./askForJob.js');
  // The schedule asked for is read in the job's zone, which must be valid before anything is asked.
  const answers = await askForJob(io, validateJobTimeZone(flags.timezone) ?? cron.settings.timeZone);
  if (answers === null) return null;
  return { ...flags, ...answers, name: answers.name ?? flags.name, deliver: answers.deliver ?? flags.deliver };
}

/** The per-job toolsets, working folder and answers carried forward, as the flags give them (create and edit alike). */
function perJobFlags(argv: JobFlags): Pick<EditJobInput, 'toolsets' | 'workdir' | 'context_from' | 'continue'> {
  if (argv.clearToolsets && argv.toolset?.length) throw new CliUsageError('Give either --toolset or --clear-toolsets, not both.');
  const flags: Pick<EditJobInput, 'toolsets' | 'workdir' | 'context_from' | 'continue'> = {};
  if (argv.toolset !== undefined) flags.toolsets = argv.toolset;
  if (argv.clearToolsets) flags.toolsets = null;
  if (argv.workdir !== undefined) flags.workdir = argv.workdir;
  if (argv.contextFrom !== undefined) flags.context_from = argv.contextFrom;
  if (argv.continue !== undefined) flags.continue = argv.continue;
  return flags;
}

/** The changes `agent cron edit` makes, from its flags; flags that contradict each other, or none at all, are a usage error. */
export function editInput(
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
  Object.assign(input, perJobFlags(argv));
  if (argv.after !== undefined) input.after = argv.after;
  const budget = budgetFlags(argv);
  if (budget !== undefined) input.budget = budget;
  if (argv.timeout !== undefined) input.timeout_seconds = argv.timeout;
  const retry = retryFlags(argv);
  if (retry !== undefined) input.retry = retry;
  if (argv.overlap !== undefined) input.overlap = argv.overlap;
  if (Object.keys(input).length === 1) {
    throw new CliUsageError(
      'Nothing to change: give at least one of --schedule, --prompt, --name, --deliver, --skill, --clear-skills, --script, --clear-script, --repeat, --model, --provider, --tz, --catch-up, --agent/--no-agent, --toolset, --clear-toolsets, --workdir, --context-from, --after, --continue/--no-continue, --max-turns, --max-tokens, --max-cost, --max-cost-per-day, --timeout, --retry or --overlap (see "agent cron edit --help").',
    );
  }
  return input;
}
