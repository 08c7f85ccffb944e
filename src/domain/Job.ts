/**
 * A job: its record as stored, the states it can be in, and how it is created and edited. What
 * happens to a job over its runs is in jobLifecycle.ts, what a recurring job does with a slot it
 * found overdue in jobCatchUp.ts, finding a job by id or name in jobLookup.ts, chains jobChains.ts. */
import { ERROR_CODES } from './errorCodes.js';
import { InvalidJobError, InvalidScheduleError } from './errors.js';
import { compactBudget, validateTimeout, type JobBudget } from './jobLimits.js';
import { jobContextFrom, jobToolsets } from './jobTools.js';
import type { Overlap } from './jobCatchUp.js';
import { validateRetryPolicy, type PendingRetry, type RetryAttempt, type RetryPolicy } from './retries.js';
import type { LastStatus } from './RunOutcome.js';
import { isRecurring, nextRunFollowsZone, nextRunTime, type Schedule } from './Schedule.js';
import type { JobChainFields } from './jobChains.js';
import { assertTimeZone, toIsoUtc, zoneSpelling } from './zonedTime.js';

export { compactBudget, JOB_BUDGET_KEYS, validateTimeout, type JobBudget } from './jobLimits.js';
export { checkJobMcpGrants, jobContextFrom, jobToolsets } from './jobTools.js';

/** The states a job can be in, in the order they are shown (the dashboard's filter lists them so). */
export const JOB_STATES = ['scheduled', 'paused', 'running', 'completed'] as const;
export type JobState = (typeof JOB_STATES)[number];

/**
 * The chat a job was created in, by the job tool in a conversation: a platform's chat and thread
 * and who asked, or `bot-chat` and the profile (`chat_id`) for `agent chat --profile`. Jobs made
 * on the command line have none. `deliver: origin` delivers there.
 */
export interface JobOrigin {
  platform: string;
  chat_id: string;
  thread_id?: string | null;
  /** The platform's id of the person whose message made the job. */
  user_id?: string | null;
  user_name?: string | null;
}

/** Who is running a job and since when; written before the run starts. */
export interface JobClaim {
  /** `<host>:<pid>` of the claiming process. */
  by: string;
  at: string;
  /**
   * Someone asked for this run to stop (`agent cron cancel`, the dashboard): who and when. The
   * process that runs it stops it when it sees this; it goes with the claim when the run ends.
   */
  cancel?: { by: string; at: string };
  /** The run is a retry: which attempt, and the first attempt's run (domain/retries.ts). */
  retry?: RetryAttempt;
}

/**
 * What a recurring job found overdue does (`cron.catch_up`, a job's `catch_up`): `once` runs it
 * once, `skip` skips the slot and waits for the next one (docs/cron.md, Missed runs).
 */
export type CatchUp = 'once' | 'skip';
export const CATCH_UP_POLICIES: readonly CatchUp[] = ['once', 'skip'];

/** A job record, field names as stored in jobs.json. */
export interface Job extends JobChainFields {
  id: string;
  name: string;
  prompt: string;
  schedule: Schedule;
  /**
   * The job's own IANA time zone, in which its cron expression and a one-shot's time without an
   * offset are read and its times shown; null (or absent in an older record) for the configured zone.
   */
  timezone: string | null;
  skills: string[];
  deliver: string;
  repeat: { times: number | null; completed: number };
  state: JobState;
  enabled: boolean;
  next_run_at: string | null;
  last_run_at: string | null;
  last_status: LastStatus | null;
  last_error: string | null;
  last_delivery_error: string | null;
  last_delivery_queued: string[] | null;
  created_at: string;
  model: string | null;
  provider: string | null;
  script: string | null;
  origin: JobOrigin | null;
  paused_at: string | null;
  /** Why the job was paused, as the one who paused it said (`agent cron pause --reason`); null when not paused or no reason was given. */
  paused_reason: string | null;
  /** Consecutive failed runs up to the last one (`error`, `blocked_config`, `delivery_failed`); 0 after a run that did not fail. */
  failure_streak: number;
  /** What an overdue slot of this recurring job does; null follows `cron.catch_up`. */
  catch_up: CatchUp | null;
  /** True when a run runs only the pre-run script and delivers its output, without the agent. */
  no_agent: boolean;
  /**
   * The toolsets its runs get instead of the `agent-cron` preset (`--toolset`); null (or absent
   * in an older record) for the preset. The recursion guard removes `cronjob` whatever is named.
   */
  toolsets?: string[] | null;
  /**
   * The folder its terminal commands and pre-run script run in, bound writable into the sandbox,
   * and whose AGENTS.md its runs read (`--workdir`): an absolute path; null for the workspace.
   */
  workdir?: string | null;
  /** Ids of the jobs whose last `ok` answer each run is given as context (`--context-from`); empty for none. */
  context_from?: string[];
  /** True when each run is given this job's own last `ok` answer as context (`--continue`). */
  continue?: boolean;
  claim: JobClaim | null;
  /**
   * The runs under way beside the one `claim` holds, each by its own claim (overlap policy
   * `allow`, domain/jobRunsBeside.ts); null (or absent) for none.
   */
  claims_beside?: JobClaim[] | null;
  /**
   * The longest a run may take, in seconds (`--timeout`): past it, the run's process trees are
   * killed and it is recorded `error` `timed out after …`. Null (or absent in an older record) for none.
   */
  timeout_seconds?: number | null;
  /** How its runs are retried (`--retry`); null (or absent) follows `cron.retry`, `times: 0` retries none. */
  retry?: RetryPolicy | null;
  /** A retry waiting for its time (its `next_run_at`); null (or absent) when none waits. */
  retry_pending?: PendingRetry | null;
  /** What a slot that comes while its previous run still runs does (`--overlap`); null (or absent): `skip`. */
  overlap?: Overlap | null;
  /** The job's own limits (`--max-turns`, `--max-tokens`, `--max-cost`, `--max-cost-per-day`); absent: `agent.budget`'s. */
  budget?: JobBudget | null;
}

export interface NewJobInput {
  id: string;
  schedule: Schedule;
  prompt: string;
  /** The job's own time zone (validateJobTimeZone); null or absent for the configured zone. */
  timezone?: string | null;
  name?: string | null;
  deliver?: string | null;
  skills?: readonly string[];
  repeat?: number | null;
  model?: string | null;
  provider?: string | null;
  script?: string | null;
  origin?: JobOrigin | null;
  catch_up?: CatchUp | null;
  no_agent?: boolean;
  /** Toolsets instead of the preset (checked by jobToolsets); null, absent or empty for the preset. */
  toolsets?: readonly string[] | null;
  /** The working folder, absolute, already checked to exist; null or absent for the workspace. */
  workdir?: string | null;
  /** Ids of the jobs whose last answers are carried forward (resolved by the caller). */
  context_from?: readonly string[];
  continue?: boolean;
  budget?: JobBudget | null;
  /** The longest a run may take, in seconds; null or absent for no limit. */
  timeout_seconds?: number | null;
  /** Its retries; null or absent follows `cron.retry`. */
  retry?: Partial<RetryPolicy> | null;
  overlap?: Overlap | null;
}

/**
 * A job's own time zone as stored: an IANA name this runtime knows, or null (the configured
 * zone) for none or an empty one. An unknown name is refused in one sentence saying where the
 * valid names are listed.
 */
export function validateJobTimeZone(zone: string | null | undefined): string | null {
  const name = zone?.trim() ?? '';
  if (name === '') return null;
  try {
    return zoneSpelling(assertTimeZone(name));
  } catch {
    throw new InvalidScheduleError(
      ERROR_CODES.TIMEZONE.INVALID,
      `Unknown time zone "${name}"; use an IANA name such as Europe/Berlin or America/New_York (\`timedatectl list-timezones\` lists them, as does the tz database at https://www.iana.org/time-zones).`,
    );
  }
}

/** The zone a job's schedule is read and its times shown in: its own, else the configured one. */
export function jobTimeZone(job: { timezone?: string | null }, configuredZone: string): string {
  return job.timezone || configuredZone;
}

const DEFAULT_NAME_LENGTH = 50;

function defaultName(prompt: string): string {
  const oneLine = prompt.replace(/\s+/g, ' ').trim();
  return oneLine.length <= DEFAULT_NAME_LENGTH ? oneLine : `${oneLine.slice(0, DEFAULT_NAME_LENGTH - 1)}…`;
}

export function validateRepeat(times: number | null | undefined): number | null {
  if (times === null || times === undefined) return null;
  if (!Number.isSafeInteger(times) || times < 1) {
    throw new InvalidJobError(ERROR_CODES.JOB.INVALID_REPEAT, `Repeat count ${times} is not valid; give a whole number of 1 or more.`);
  }
  return times;
}

function requirePrompt(prompt: string): string {
  if (prompt.trim() === '') {
    throw new InvalidJobError(ERROR_CODES.JOB.EMPTY_PROMPT, 'The prompt is empty; give the task the agent should do.');
  }
  return prompt;
}

/**
 * A job that runs no agent runs its script instead, so it must have one. It needs no prompt
 * (nobody reads it); a job that runs the agent does, so giving a job without one the agent back
 * (`agentBack`) is refused too.
 */
function requireWhatRuns(job: Job, agentBack = !job.no_agent): Job {
  if (job.no_agent && !job.script) {
    throw new InvalidJobError(
      ERROR_CODES.JOB.SCRIPT_REQUIRED,
      `Job '${job.name}' is to run without the agent but has no pre-run script to run instead; give it a script, or let it run the agent.`,
    );
  }
  if (agentBack && job.prompt.trim() === '') {
    throw new InvalidJobError(
      ERROR_CODES.JOB.EMPTY_PROMPT,
      `Job '${job.name}' has no prompt for the agent; give it the task the agent should do.`,
    );
  }
  return job;
}

/** The name a job gets when none is given: the start of its prompt, else (a job without the agent) its script. */
function nameFor(input: NewJobInput): string {
  const chosen = input.name?.trim();
  if (chosen) return chosen;
  if (input.prompt.trim() === '' && input.script) return defaultName(input.script);
  return defaultName(input.prompt);
}

/**
 * A new job in state `scheduled`; one-shots repeat once, recurring jobs forever unless told. Its
 * first run is counted in its own zone, else in `configuredZone`.
 */
export function createJob(input: NewJobInput, now: Date, configuredZone: string): Job {
  const recurring = isRecurring(input.schedule);
  const timezone = validateJobTimeZone(input.timezone);
  const first = nextRunTime(input.schedule, now, timezone ?? configuredZone);
  if (!first && input.schedule.kind !== 'after') {
    throw new InvalidScheduleError(ERROR_CODES.SCHEDULE.NEVER, `The schedule "${input.schedule.display}" never fires; choose another.`);
  }
  if (!input.no_agent) requirePrompt(input.prompt);
  return requireWhatRuns({
    id: input.id,
    name: nameFor(input),
    prompt: input.prompt,
    schedule: input.schedule,
    timezone,
    skills: [...(input.skills ?? [])],
    deliver: input.deliver?.trim() || 'origin',
    repeat: { times: validateRepeat(input.repeat) ?? (recurring ? null : 1), completed: 0 },
    state: 'scheduled',
    enabled: true,
    next_run_at: first ? toIsoUtc(first) : null,
    last_run_at: null,
    last_status: null,
    last_error: null,
    last_delivery_error: null,
    last_delivery_queued: null,
    created_at: toIsoUtc(now),
    model: input.model ?? null,
    provider: input.provider ?? null,
    script: input.script ?? null,
    origin: input.origin ?? null,
    paused_at: null,
    paused_reason: null,
    failure_streak: 0,
    catch_up: input.catch_up ?? null,
    no_agent: input.no_agent ?? false,
    toolsets: jobToolsets(input.toolsets),
    workdir: input.workdir ?? null,
    context_from: jobContextFrom(input.context_from, { id: input.id, name: nameFor(input) }),
    continue: input.continue ?? false,
    claim: null,
    timeout_seconds: validateTimeout(input.timeout_seconds),
    retry: validateRetryPolicy(input.retry),
    overlap: input.overlap ?? null,
    ...(compactBudget(input.budget) ? { budget: compactBudget(input.budget) } : {}),
  });
}

export interface JobChanges {
  schedule?: Schedule;
  /** A new own time zone, or null for the configured zone again. */
  timezone?: string | null;
  prompt?: string;
  name?: string;
  deliver?: string;
  skills?: readonly string[];
  repeat?: number | null;
  model?: string | null;
  provider?: string | null;
  script?: string | null;
  /** null: follow `cron.catch_up` again. */
  catch_up?: CatchUp | null;
  no_agent?: boolean;
  /** New toolsets; null or an empty list for the `agent-cron` preset again. */
  toolsets?: readonly string[] | null;
  /** A new working folder (absolute, checked), or null for the workspace again. */
  workdir?: string | null;
  /** New ids of the jobs to take context from; empty for none. */
  context_from?: readonly string[];
  continue?: boolean;
  /** Limits to set; a limit given null is the job's no more (`agent.budget`'s again). */
  budget?: { [Key in keyof JobBudget]?: number | null };
  /** A new time limit in seconds, or null for none. */
  timeout_seconds?: number | null;
  /** Retry settings to change (the rest stay), or null to follow `cron.retry` again. */
  retry?: Partial<RetryPolicy> | null;
  overlap?: Overlap | null;
}

/**
 * Applies an edit. A new schedule restarts the job's timing from `now`, and so does a new time
 * zone for a cron schedule (an interval's slots do not depend on the zone; a one-shot written
 * without an offset is read again in the new zone by the caller, as a new schedule).
 */
export function editJob(job: Job, changes: JobChanges, now: Date, configuredZone: string): Job {
  const edited: Job = { ...job };
  if (changes.timezone !== undefined) edited.timezone = validateJobTimeZone(changes.timezone);
  const zone = jobTimeZone(edited, configuredZone);
  if (changes.prompt !== undefined) edited.prompt = requirePrompt(changes.prompt);
  if (changes.name !== undefined) edited.name = changes.name.trim() || job.name;
  if (changes.deliver !== undefined) edited.deliver = changes.deliver.trim() || 'origin';
  if (changes.skills !== undefined) edited.skills = [...changes.skills];
  if (changes.model !== undefined) edited.model = changes.model;
  if (changes.provider !== undefined) edited.provider = changes.provider;
  if (changes.script !== undefined) edited.script = changes.script;
  if (changes.catch_up !== undefined) edited.catch_up = changes.catch_up;
  if (changes.no_agent !== undefined) edited.no_agent = changes.no_agent;
  if (changes.toolsets !== undefined) edited.toolsets = jobToolsets(changes.toolsets);
  if (changes.workdir !== undefined) edited.workdir = changes.workdir;
  if (changes.context_from !== undefined) edited.context_from = jobContextFrom(changes.context_from, job);
  if (changes.continue !== undefined) edited.continue = changes.continue;
  if (changes.timeout_seconds !== undefined) edited.timeout_seconds = validateTimeout(changes.timeout_seconds);
  if (changes.overlap !== undefined) edited.overlap = changes.overlap;
  if (changes.retry !== undefined) edited.retry = changes.retry === null ? null : validateRetryPolicy({ ...job.retry, ...changes.retry });
  if (changes.budget !== undefined) {
    const budget = compactBudget({ ...job.budget, ...changes.budget });
    if (budget) edited.budget = budget;
    else delete edited.budget;
  }
  if (changes.repeat !== undefined) {
    edited.repeat = { ...job.repeat, times: validateRepeat(changes.repeat) };
  }
  if (changes.schedule !== undefined) {
    edited.schedule = changes.schedule;
    // A retry waits for a slot of the old schedule.
    edited.retry_pending = null;
    if (job.state !== 'running') {
      const next = nextRunTime(changes.schedule, now, zone);
      edited.next_run_at = next ? toIsoUtc(next) : null;
    }
    if (job.state === 'completed') {
      Object.assign(edited, { state: 'scheduled', enabled: true, repeat: { ...edited.repeat, completed: 0 } });
    }
  } else if (
    zone !== jobTimeZone(job, configuredZone) &&
    nextRunFollowsZone(job.schedule) &&
    job.state !== 'running' &&
    job.state !== 'completed'
  ) {
    const next = nextRunTime(job.schedule, now, zone);
    edited.next_run_at = next ? toIsoUtc(next) : null;
  }
  return requireWhatRuns(edited, job.no_agent && !edited.no_agent);
}
