/**
 * A job's lifecycle after its creation: when it is due, how a run claims it, how the end of a run
 * is marked (the outcome, the failure streak, completion), and pausing and resuming it.
 */
import { ERROR_CODES } from './errorCodes.js';
import { InvalidJobError, JobError } from './errors.js';
import { jobTimeZone, type Job } from './Job.js';
import { isFailedStatus, type RunOutcome } from './RunOutcome.js';
import { isRecurring, nextRunTime } from './Schedule.js';
import { formatWallClock, toIsoUtc } from './zonedTime.js';
import { printableLines } from './controlCharacters.js';
import type { PendingRetry } from './retries.js';
import { chainClaimed } from './jobChains.js';
import { runsBeside } from './jobRunsBeside.js';

/** What "due" looks at of a job. */
export type DueFields = Pick<Job, 'state' | 'enabled' | 'next_run_at' | 'overlap' | 'schedule'>;

/**
 * When a job that waits for a run falls due, in milliseconds since the epoch: its `next_run_at`
 * while it is `scheduled` and enabled, or `running` with runs beside allowed (runsBeside). Null
 * for a job that waits for none: paused, completed, running, disabled, or without a next run. The PostgreSQL job store spells the same rule in
 * SQL (adapters/postgres/jobSql.ts), and its contract test holds the two to agree.
 */
export function dueTime(job: DueFields): number | null {
  if (!(job.state === 'scheduled' || (job.state === 'running' && runsBeside(job))) || !job.enabled || job.next_run_at === null) return null;
  const at = Date.parse(job.next_run_at);
  return Number.isNaN(at) ? null : at;
}

/** Whether a job is due by `now`: it waits for a run, and its time has come. */
export function isDue(job: DueFields, now: Date): boolean {
  const at = dueTime(job);
  return at !== null && at <= now.getTime();
}

/**
 * Marks a due job `running` before its run starts. A recurring job's next slot is computed from
 * `now` here, so an overdue job fires once and a crash mid-run can never replay the slot.
 */
export function claimJob(job: Job, claimant: string, now: Date, configuredZone: string): Job {
  const retry = dueRetry(job, now);
  if (retry) {
    // A retry of its slot: the next regular slot stays where it was.
    const { attempt, retry_of: of } = retry;
    return {
      ...job,
      state: 'running',
      claim: { by: claimant, at: toIsoUtc(now), retry: { attempt, retry_of: of } },
      next_run_at: isRecurring(job.schedule) ? retry.regular_next : job.next_run_at,
      retry_pending: null,
    };
  }
  const next = isRecurring(job.schedule) ? nextRunTime(job.schedule, now, jobTimeZone(job, configuredZone)) : null;
  return {
    ...job,
    state: 'running',
    claim: { by: claimant, at: toIsoUtc(now) },
    ...chainClaimed(job, now),
    next_run_at: isRecurring(job.schedule) ? (next ? toIsoUtc(next) : null) : job.next_run_at,
    // A retry whose regular slot has come is dropped: the slot runs instead.
    ...(job.retry_pending ? { retry_pending: null } : {}),
  };
}

/**
 * The retry a claim at `now` runs: the job's pending one, when its `next_run_at` is the retry's
 * and its next regular slot has not come yet; then that slot runs instead (a retry never runs
 * once the slot after it has started).
 */
function dueRetry(job: Job, now: Date): PendingRetry | null {
  const retry = job.retry_pending;
  if (!retry || job.next_run_at !== retry.at) return null;
  if (retry.regular_next !== null && Date.parse(retry.regular_next) <= now.getTime()) return null;
  return retry;
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

function statusFields(outcome: RunOutcome): Pick<Job, 'last_status' | 'last_error' | 'last_delivery_error' | 'last_delivery_queued'> {
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

/** Whether a run with this outcome counts as failed, for the failure streak. */
export function isFailedRun(outcome: RunOutcome): boolean {
  return isFailedStatus(outcome.status);
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

/**
 * The marking step at the end of every run, failed or not: the run is counted, `last_*` written,
 * and the job completes when it was a one-shot or its repeat count is used up. A job paused
 * while it ran stays paused.
 */
export function finishRun(job: Job, outcome: RunOutcome, startedAt: Date, retry: PendingRetry | null = null): Job {
  if (outcome.status === 'blocked_config')
    return { ...refuseRun(job, outcome.error, startedAt), failure_streak: streakAfter(job, outcome) };
  if (retry) return retryLater(job, outcome, startedAt, retry);
  return withOutcome(countRun(job), outcome, startedAt);
}

/**
 * The end of a run that failed and is retried (`retry`): its outcome is the job's `last_status`,
 * but the run is not counted (its slot is not over: the last attempt counts it) and the failure
 * streak waits for the last attempt too. The job waits for the retry's time, `scheduled` (or
 * still paused, when paused meanwhile).
 */
function retryLater(job: Job, outcome: RunOutcome, startedAt: Date, retry: PendingRetry): Job {
  return {
    ...job,
    ...statusFields(outcome),
    last_run_at: toIsoUtc(startedAt),
    claim: null,
    state: job.state === 'paused' ? 'paused' : 'scheduled',
    next_run_at: retry.at,
    retry_pending: retry,
  };
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
  const exhausted = !isRecurring(job.schedule) || (job.repeat.times !== null && completed >= job.repeat.times);
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
  if (!isRecurring(job.schedule)) {
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
  const wasFailed = isFailedStatus(job.last_status);
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
    throw new InvalidJobError(
      ERROR_CODES.JOB.INVALID_PAUSE_REASON,
      'The pause reason holds a line break or another control character; write it as one line of text.',
    );
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
    throw new JobError(
      ERROR_CODES.JOB.INVALID_STATE,
      `Job '${job.name}' has completed and cannot be paused; remove it or edit its schedule.`,
    );
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
  return {
    ...job,
    state: 'scheduled',
    enabled: true,
    paused_at: null,
    paused_reason: null,
    claim: null,
    next_run_at: next ? toIsoUtc(next) : null,
    // Its slot is counted from now: a retry that waited for the old one is dropped.
    ...(job.retry_pending ? { retry_pending: null } : {}),
  };
}

/** Refuses a manual run of a job that is paused, running or completed. */
export function assertRunnableNow(job: Job): void {
  if (job.state !== 'scheduled') {
    const hint =
      job.state === 'paused'
        ? 'resume it first'
        : job.state === 'running'
          ? 'wait for the run in progress'
          : 'edit its schedule to run it again';
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
