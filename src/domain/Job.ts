import { ERROR_CODES } from './errorCodes.js';
import { InvalidJobError, InvalidScheduleError, JobError } from './errors.js';
import type { UnreadableRecord } from './JobRecord.js';
import type { LastStatus, RunOutcome } from './RunOutcome.js';
import { ONE_SHOT_GRACE_MS, isRecurring, nextRunTime, type Schedule } from './Schedule.js';
import { assertTimeZone, formatWallClock, toIsoUtc, zoneSpelling } from './zonedTime.js';
import { printableLines } from './controlCharacters.js';
import { sameName } from './jobNames.js';

export type JobState = 'scheduled' | 'paused' | 'completed' | 'running';
export const JOB_STATES: readonly JobState[] = ['scheduled', 'paused', 'completed', 'running'];

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
    throw new InvalidJobError(ERROR_CODES.JOB.EMPTY_PROMPT, `Job '${job.name}' has no prompt for the agent; give it the task the agent should do.`);
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
  } else if (zone !== jobTimeZone(job, configuredZone) && job.schedule.kind === 'cron' && job.state !== 'running' && job.state !== 'completed') {
    const next = nextRunTime(job.schedule, now, zone);
    edited.next_run_at = next ? toIsoUtc(next) : null;
  }
  return requireWhatRuns(edited, job.no_agent && !edited.no_agent);
}

export function isDue(job: Job, now: Date): boolean {
  return (
    job.state === 'scheduled' &&
    job.enabled &&
    job.next_run_at !== null &&
    Date.parse(job.next_run_at) <= now.getTime()
  );
}

/**
 * A one-shot found more than the grace late for its own time is not run (docs/cron.md). One
 * resumed after its time has its slot at the resume instant instead (see resumeJob): the user
 * asked for that run, so it is never judged missed and fires at the next tick, however late.
 */
export function isMissedOneShot(job: Job, now: Date, graceMs: number = ONE_SHOT_GRACE_MS): boolean {
  if (job.schedule.kind !== 'once' || job.next_run_at === null) return false;
  const slot = Date.parse(job.next_run_at);
  if (slot > Date.parse(job.schedule.run_at)) return false;
  return now.getTime() - slot > graceMs;
}

/**
 * The least lateness at which a recurring slot counts as overdue, whatever the grace: the period
 * of the slowest ticker (an `agent chat` session looks once a minute), so that a slot its tick
 * came round to in the normal way is never judged overdue.
 */
export const OVERDUE_MIN_LATENESS_MS = 60_000;

/** The catch-up policy a job follows: its own, else the configured one (`cron.catch_up`). */
export function catchUpOf(job: Pick<Job, 'catch_up'>, configured: CatchUp = 'once'): CatchUp {
  return job.catch_up ?? configured;
}

/**
 * Whether the slot of a recurring job was found overdue at `at`: later than the missed-run grace
 * of one-shots (`cron.one_shot_grace_seconds`, isMissedOneShot), and never by less than
 * OVERDUE_MIN_LATENESS_MS. One-shots are never overdue here: they have the missed rule.
 */
export function isOverdueSlot(job: Job, at: Date, graceMs: number = ONE_SHOT_GRACE_MS): boolean {
  if (!isRecurring(job.schedule) || job.next_run_at === null) return false;
  return at.getTime() - Date.parse(job.next_run_at) > Math.max(graceMs, OVERDUE_MIN_LATENESS_MS);
}

/** Whether a due job's slot is skipped rather than run: it is overdue and its policy is `skip`. */
export function skipsOverdueSlot(job: Job, at: Date, configured: CatchUp = 'once', graceMs: number = ONE_SHOT_GRACE_MS): boolean {
  return catchUpOf(job, configured) === 'skip' && isOverdueSlot(job, at, graceMs);
}

/** How many slots of a recurring job fell between `slot` and `now`, `slot` included; counted up to `cap`. */
export function slotsMissed(schedule: Schedule, slot: Date, now: Date, timeZone: string, cap = 1000): number {
  let count = 0;
  for (let at: Date | null = slot; at !== null && at.getTime() <= now.getTime() && count < cap; at = nextRunTime(schedule, at, timeZone)) count += 1;
  return Math.max(1, count);
}

/**
 * Skips the overdue slot of a recurring job (catch-up policy `skip`): nothing runs and nothing is
 * counted; the next slot is computed from `now`, as a run's claim would.
 */
export function skipOverdueSlot(job: Job, now: Date, timeZone: string): Job {
  const next = nextRunTime(job.schedule, now, timeZone);
  return { ...job, next_run_at: next ? toIsoUtc(next) : null };
}

/**
 * Marks a due job `running` before its run starts. A recurring job's next slot is computed from
 * `now` here, so an overdue job fires once and a crash mid-run can never replay the slot.
 */
export function claimJob(job: Job, claimant: string, now: Date, configuredZone: string): Job {
  const next = isRecurring(job.schedule) ? nextRunTime(job.schedule, now, jobTimeZone(job, configuredZone)) : null;
  return {
    ...job,
    state: 'running',
    claim: { by: claimant, at: toIsoUtc(now) },
    next_run_at: isRecurring(job.schedule) ? (next ? toIsoUtc(next) : null) : job.next_run_at,
  };
}

/**
 * Claims the slot `fireAt` that a trigger provider fired. Its clock decides: the
 * slot runs now even if `fireAt` is still ahead on ours, so a recurring job's next slot is counted
 * from the later of the two and can never be `fireAt` again.
 */
export function claimFiredSlot(job: Job, claimant: string, now: Date, fireAt: Date, configuredZone: string): Job {
  const from = fireAt.getTime() > now.getTime() ? fireAt : now;
  return { ...claimJob(job, claimant, from, configuredZone), claim: { by: claimant, at: toIsoUtc(now) } };
}

function statusFields(outcome: RunOutcome): Pick<
  Job,
  'last_status' | 'last_error' | 'last_delivery_error' | 'last_delivery_queued'
> {
  const cleared = { last_error: null, last_delivery_error: null, last_delivery_queued: null };
  switch (outcome.status) {
    case 'ok':
      return { ...cleared, last_status: 'ok' };
    case 'error':
    case 'blocked_config':
      // Errors quote providers, platforms and scripts: stored with lines and tabs, nothing else raw.
      return { ...cleared, last_status: outcome.status, last_error: printableLines(outcome.error) };
    case 'delivery_failed':
      return {
        ...cleared,
        last_status: 'delivery_failed',
        last_delivery_error: printableLines(outcome.deliveryError),
        last_delivery_queued: outcome.queued && outcome.queued.length > 0 ? [...outcome.queued] : null,
      };
    case 'delivery_queued':
      return { ...cleared, last_status: 'delivery_queued', last_delivery_queued: [...outcome.receipts] };
  }
}

/**
 * The marking step at the end of every run, failed or not: the run is counted, `last_*` written,
 * and the job completes when it was a one-shot or its repeat count is used up. A job paused
 * while it ran stays paused.
 */
/** Whether a run with this outcome counts as failed, for the failure streak. */
export function isFailedRun(outcome: RunOutcome): boolean {
  return outcome.status === 'error' || outcome.status === 'blocked_config' || outcome.status === 'delivery_failed';
}

/** The failure streak after a run with `outcome`. */
function streakAfter(job: Job, outcome: RunOutcome): number {
  return isFailedRun(outcome) ? job.failure_streak + 1 : 0;
}

/** `cron.failure_alerts`: the failure notice on the first failure of a streak, on every one, or never. */
export type FailureAlerts = 'first' | 'every' | 'off';
export const FAILURE_ALERTS: readonly FailureAlerts[] = ['first', 'every', 'off'];

/** Whether a run of `job` that failed sends the failure notice, the job's streak being the one before that run. */
export function alertsFailure(job: Pick<Job, 'failure_streak'>, alerts: FailureAlerts): boolean {
  return alerts === 'every' || (alerts === 'first' && job.failure_streak === 0);
}

export function finishRun(job: Job, outcome: RunOutcome, startedAt: Date): Job {
  if (outcome.status === 'blocked_config') return { ...refuseRun(job, outcome.error, startedAt), failure_streak: streakAfter(job, outcome) };
  return withOutcome(countRun(job), outcome, startedAt);
}

/**
 * The first half of the marking step, for a run whose answer is recorded and waits for its
 * delivery (the gateway's cron runs, docs/delivery.md): the run is counted, the claim let go, and
 * the job goes back to `scheduled` (or `completed`, for a one-shot or a used-up repeat count; a
 * job paused while it ran stays paused), so that its next slot can be claimed. `last_status`, its
 * detail fields, `last_run_at` and the failure streak are left as they are: they say how the run
 * went only once the platform answered (`markRunOutcome`).
 */
export function countRun(job: Job): Job {
  const completed = job.repeat.completed + 1;
  const exhausted = job.schedule.kind === 'once' || (job.repeat.times !== null && completed >= job.repeat.times);
  const counted: Job = { ...job, repeat: { ...job.repeat, completed }, claim: null };
  if (exhausted) return { ...counted, state: 'completed', enabled: false, next_run_at: null };
  if (job.state === 'paused') return counted;
  return { ...counted, state: 'scheduled' };
}

/**
 * The second half of the marking step: `last_run_at`, `last_status` and its detail fields say how
 * the run that started at `startedAt` went, and the failure streak follows. A run of the job that
 * started later and is marked already keeps the job's status: the job is returned unchanged.
 */
export function markRunOutcome(job: Job, outcome: RunOutcome, startedAt: Date): Job {
  if (job.last_run_at !== null && Date.parse(job.last_run_at) > startedAt.getTime()) return job;
  return withOutcome(job, outcome, startedAt);
}

function withOutcome(job: Job, outcome: RunOutcome, startedAt: Date): Job {
  return { ...job, ...statusFields(outcome), failure_streak: streakAfter(job, outcome), last_run_at: toIsoUtc(startedAt) };
}

/**
 * The marking step of a run that pre-dispatch validation refused: nothing ran, so
 * nothing is spent. A recurring job keeps the next slot its claim moved it to; a one-shot is paused
 * instead of used up, so that fixing the configuration and resuming it still delivers it.
 */
function refuseRun(job: Job, reason: string, startedAt: Date): Job {
  const refused: Job = {
    ...job,
    ...statusFields({ status: 'blocked_config', error: reason }),
    last_run_at: toIsoUtc(startedAt),
    claim: null,
  };
  if (job.schedule.kind === 'once') {
    return {
      ...refused,
      state: 'paused',
      enabled: false,
      paused_at: job.paused_at ?? toIsoUtc(startedAt),
      paused_reason: job.paused_reason ?? `its run was refused: ${reason}`,
    };
  }
  if (job.state === 'paused') return refused;
  return { ...refused, state: 'scheduled' };
}

/** Whether the run that started at `startedAt` is the job's last run (its `last_run_at`, to the second). */
export function isLastRunOf(job: Pick<Job, 'last_run_at'>, startedAt: Date): boolean {
  return job.last_run_at !== null && job.last_run_at === toIsoUtc(startedAt);
}

/**
 * The job after its last run's answer was delivered again with `outcome` (`agent cron
 * redeliver`): `last_status` and its detail fields say how the redelivery went, and the failure
 * streak ends when it got through (a run that had not failed and now did adds one). Nothing else
 * changes: the run is not counted again, the state, the claim and the next run stay as they are.
 */
export function redeliverLastRun(job: Job, outcome: RunOutcome): Job {
  const wasFailed = job.last_status === 'error' || job.last_status === 'blocked_config' || job.last_status === 'delivery_failed';
  const streak = !isFailedRun(outcome) ? 0 : wasFailed ? job.failure_streak : job.failure_streak + 1;
  return { ...job, ...statusFields(outcome), failure_streak: streak };
}

/** A one-shot found too late: completed without running, with a `missed:` error. */
export function markMissed(job: Job, now: Date): Job {
  return {
    ...job,
    ...statusFields({
      status: 'error',
      error: `missed: the job was due at ${job.next_run_at} but nothing ran it until ${toIsoUtc(now)}`,
    }),
    state: 'completed',
    enabled: false,
    next_run_at: null,
    claim: null,
  };
}

/**
 * Returns an abandoned `running` job to service with an `interrupted:` error. A recurring job
 * goes back to `scheduled` (its slot was consumed when claimed); a one-shot's only slot was
 * consumed too, so it completes rather than running a second time.
 */
export function recoverInterrupted(job: Job, reason: string): Job {
  const outcome: RunOutcome = { status: 'error', error: `interrupted: ${reason}` };
  const startedAt = job.claim ? new Date(job.claim.at) : new Date(job.last_run_at ?? job.created_at);
  return finishRun({ ...job, state: 'scheduled' }, outcome, startedAt);
}

/** The longest pause reason kept: a sentence or two, not a document. */
export const PAUSE_REASON_MAX_LENGTH = 500;

/** A pause reason as stored: trimmed, null when empty; refused when too long or not one line of text. */
export function validatePauseReason(reason: string | null | undefined): string | null {
  const text = reason?.trim() ?? '';
  if (text === '') return null;
  if (/[\u0000-\u001f\u007f]/.test(text)) {
    throw new InvalidJobError(ERROR_CODES.JOB.INVALID_PAUSE_REASON, 'The pause reason holds a line break or another control character; write it as one line of text.');
  }
  if (text.length > PAUSE_REASON_MAX_LENGTH) {
    throw new InvalidJobError(
      ERROR_CODES.JOB.INVALID_PAUSE_REASON,
      `The pause reason is ${text.length} characters long; keep it to ${PAUSE_REASON_MAX_LENGTH} or fewer.`,
    );
  }
  return text;
}

/**
 * Pauses the job, with the reason given (validatePauseReason). Pausing a paused job changes
 * nothing but its reason, when a new one is given.
 */
export function pauseJob(job: Job, now: Date, reason?: string | null): Job {
  const why = validatePauseReason(reason);
  if (job.state === 'completed') {
    throw new JobError(ERROR_CODES.JOB.INVALID_STATE, `Job '${job.name}' has completed and cannot be paused; remove it or edit its schedule.`);
  }
  if (job.state === 'paused') return why === null || why === job.paused_reason ? job : { ...job, paused_reason: why };
  // A running job keeps running; marking it paused stops it from being scheduled again.
  return { ...job, state: 'paused', enabled: false, paused_at: toIsoUtc(now), paused_reason: why };
}

export function resumeJob(job: Job, now: Date, configuredZone: string): Job {
  if (job.state !== 'paused') {
    throw new JobError(ERROR_CODES.JOB.INVALID_STATE, `Job '${job.name}' is ${job.state}, not paused; only a paused job can be resumed.`);
  }
  // A one-shot whose time has passed was asked for all the same: it becomes due at once, and its
  // slot later than its own time is what exempts it from the missed rule (isMissedOneShot).
  const next =
    job.schedule.kind === 'once'
      ? new Date(Math.max(Date.parse(job.schedule.run_at), now.getTime()))
      : nextRunTime(job.schedule, now, jobTimeZone(job, configuredZone));
  return { ...job, state: 'scheduled', enabled: true, paused_at: null, paused_reason: null, claim: null, next_run_at: next ? toIsoUtc(next) : null };
}

/** Refuses a manual run of a job that is paused, running or completed. */
export function assertRunnableNow(job: Job): void {
  if (job.state !== 'scheduled') {
    const hint =
      job.state === 'paused' ? 'resume it first' : job.state === 'running' ? 'wait for the run in progress' : 'edit its schedule to run it again';
    throw new JobError(ERROR_CODES.JOB.INVALID_STATE, `Job '${job.name}' is ${job.state} and cannot be run now; ${hint}.`);
  }
}

/**
 * Refuses a manual run of a one-shot before its time: the run would be its only one, so the job
 * would be completed before the moment it was made for. Forcing it is the caller's choice.
 */
function assertNotUsedUpEarly(job: Job, now: Date, configuredZone: string): void {
  if (isRecurring(job.schedule) || isDue(job, now) || job.next_run_at === null) return;
  const timeZone = jobTimeZone(job, configuredZone);
  throw new JobError(
    ERROR_CODES.JOB.NOT_DUE,
    `Job '${job.name}' is a one-shot due at ${formatWallClock(new Date(job.next_run_at), timeZone)} (${timeZone}), and running it now would use it up; give --force to run it anyway.`,
  );
}

/**
 * Claim for a manual run: the job runs now. A one-shot not yet due is refused unless `force`.
 * A slot still ahead is left as it was; a recurring job that is due already has its due slot used by this run (its next run computed from now, as
 * a tick's claim does), so that the next tick does not run it again.
 */
export function claimForManualRun(job: Job, claimant: string, now: Date, configuredZone: string, force = false): Job {
  assertRunnableNow(job);
  if (!force) assertNotUsedUpEarly(job, now, configuredZone);
  if (isDue(job, now) && isRecurring(job.schedule)) return claimJob(job, claimant, now, configuredZone);
  return { ...job, state: 'running', claim: { by: claimant, at: toIsoUtc(now) } };
}

/**
 * Finds a job by id or by case-insensitive name; an ambiguous name lists the matching ids. A
 * reference to a stored record that could not be read says what is wrong with that record.
 */
export function findJob(jobs: readonly Job[], reference: string, unreadable: readonly UnreadableRecord[] = []): Job {
  const wanted = reference.trim();
  const byId = jobs.find((job) => job.id === wanted);
  if (byId) return byId;
  const byName = jobs.filter((job) => sameName(job.name, wanted));
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) {
    throw new JobError(
      ERROR_CODES.JOB.AMBIGUOUS,
      `The name "${wanted}" matches ${byName.length} jobs (${byName.map((job) => job.id).join(', ')}); name one by its id.`,
    );
  }
  const damaged = unreadable.find((record) => record.id === wanted);
  if (damaged) {
    throw new JobError(
      ERROR_CODES.JOB.UNREADABLE,
      `The stored record of job ${wanted} cannot be read (${damaged.reason}), so it was left untouched; correct or remove it in the job store (jobs.json) by hand.`,
    );
  }
  throw new JobError(ERROR_CODES.JOB.NOT_FOUND, `No job has the id or name "${wanted}"; see "agent cron list".`);
}
