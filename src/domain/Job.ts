import type { RunBudget } from './runs/usage.js';
/**
 * A job: its record as stored, the states it can be in, and how it is created and edited. What
 * happens to a job over its runs is in jobLifecycle.ts, what a recurring job does with a slot it
 * found overdue in jobCatchUp.ts, and finding a job by id or name in jobLookup.ts.
 */
import { ERROR_CODES } from './errorCodes.js';
import { InvalidJobError, InvalidScheduleError } from './errors.js';
import type { LastStatus } from './RunOutcome.js';
import { isRecurring, nextRunFollowsZone, nextRunTime, type Schedule } from './Schedule.js';
import { assertTimeZone, toIsoUtc, zoneSpelling } from './zonedTime.js';

/** The states a job can be in, in the order they are shown (the dashboard's filter lists them so). */
export const JOB_STATES = ['scheduled', 'paused', 'running', 'completed'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** Where a job was created: the chat that `deliver: origin` answers to. */
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
}

/**
 * What a recurring job found overdue does (`cron.catch_up`, a job's `catch_up`): `once` runs it
 * once, `skip` skips the slot and waits for the next one (docs/cron.md, Missed runs).
 */
export type CatchUp = 'once' | 'skip';
export const CATCH_UP_POLICIES: readonly CatchUp[] = ['once', 'skip'];

/** A job record, field names as stored in jobs.json. */
export interface Job {
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
  claim: JobClaim | null;
  /** The job's own limits (`--max-turns`, `--max-tokens`, `--max-cost`, `--max-cost-per-day`); absent: `agent.budget`'s. */
  budget?: JobBudget | null;
}

/** A job's limits: those of each run, and what its runs of the last 24 h may cost together (US dollars). */
export interface JobBudget extends RunBudget {
  max_cost_per_day?: number | null;
}

export const JOB_BUDGET_KEYS = ['max_turns', 'max_tokens', 'max_cost', 'max_cost_per_day'] as const;

/** `budget` without the limits it leaves unset; null when it sets none. */
export function compactBudget(budget: JobBudget | null | undefined): JobBudget | null {
  if (!budget) return null;
  const kept: JobBudget = {};
  for (const key of JOB_BUDGET_KEYS) {
    const limit = budget[key];
    if (typeof limit === 'number' && Number.isFinite(limit) && limit > 0) kept[key] = limit;
  }
  return Object.keys(kept).length > 0 ? kept : null;
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
  budget?: JobBudget | null;
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
  if (!first) {
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
    next_run_at: toIsoUtc(first),
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
    claim: null,
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
  /** Limits to set; a limit given null is the job's no more (`agent.budget`'s again). */
  budget?: { [Key in keyof JobBudget]?: number | null };
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
