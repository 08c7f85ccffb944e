/**
 * Retries of a failed run (docs/runs.md, Retries): a run that failed for a reason that may pass
 * (the model's 429 or 5xx, a timeout or a connection error once every provider of the chain
 * failed, a pre-run script that timed out) runs again after a back-off, as an attempt of its
 * own, linked to the first. The wait doubles from the first (`backoff`) up to `max`, each with
 * ±10 % jitter; a retry whose time would come at or after the job's next regular slot is dropped,
 * and that slot runs instead.
 */
import { ERROR_CODES } from './errorCodes.js';
import { InvalidJobError } from './errors.js';

/** How a job (or route, or `cron.retry`) retries: attempts after the first, the first wait, the longest wait (seconds). */
export interface RetryPolicy {
  times: number;
  backoff_seconds: number;
  max_seconds: number;
}

/** The first wait when none is given. */
export const DEFAULT_RETRY_BACKOFF_SECONDS = 30;
/** The longest wait when none is given: an hour. */
export const DEFAULT_RETRY_MAX_SECONDS = 3600;
/** The most attempts after the first a policy may ask for. */
export const MAX_RETRY_TIMES = 20;
/** A draw in [0, 1), for the jitter: Math.random in service, a seeded generator in tests. */
export type RandomDraw = () => number;

/** Each wait is its length ± this share of it. */
const JITTER = 0.1;

/** A retry that waits for its time: which attempt it is, the run it retries, when, and the regular slot it must come before. */
export interface PendingRetry {
  /** 2 for the first retry. */
  attempt: number;
  /** The id of the first attempt's run. */
  retry_of: string;
  /** ISO 8601 UTC: when it is due. */
  at: string;
  /** ISO 8601 UTC: the job's next regular slot, its `next_run_at` again once the retry has run; null for a one-shot. */
  regular_next: string | null;
}

/** Which attempt a claimed run is, when it is a retry. */
export interface RetryAttempt {
  attempt: number;
  retry_of: string;
}

/** A policy as stored: `times` a whole number 0–20, the waits whole seconds of 1 or more (defaults filled in). */
export function validateRetryPolicy(policy: Partial<RetryPolicy> | null | undefined): RetryPolicy | null {
  if (policy === null || policy === undefined) return null;
  const times = policy.times ?? 0;
  if (!Number.isSafeInteger(times) || times < 0 || times > MAX_RETRY_TIMES) {
    throw new InvalidJobError(
      ERROR_CODES.JOB.INVALID_RETRY,
      `The retry count ${times} is not valid; give a whole number from 0 to ${MAX_RETRY_TIMES}.`,
    );
  }
  const backoff = policy.backoff_seconds ?? DEFAULT_RETRY_BACKOFF_SECONDS;
  const max = policy.max_seconds ?? DEFAULT_RETRY_MAX_SECONDS;
  for (const [what, seconds] of [
    ['retry back-off', backoff],
    ['longest retry wait', max],
  ] as const) {
    if (!Number.isSafeInteger(seconds) || seconds < 1) {
      throw new InvalidJobError(
        ERROR_CODES.JOB.INVALID_RETRY,
        `The ${what} ${seconds} is not valid; give a length of time such as 30s or 5m.`,
      );
    }
  }
  return { times, backoff_seconds: backoff, max_seconds: max };
}

/** A stored policy read back, or null when it is not one. */
export function readRetryPolicy(value: unknown): RetryPolicy | null {
  if (typeof value !== 'object' || value === null) return null;
  try {
    return validateRetryPolicy(value as Partial<RetryPolicy>);
  } catch {
    return null;
  }
}

/** A stored pending retry read back, or null when it is not one. */
export function readPendingRetry(value: unknown): PendingRetry | null {
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const { attempt, retry_of: of, at, regular_next: regular } = record;
  if (typeof attempt !== 'number' || !Number.isSafeInteger(attempt) || attempt < 2) return null;
  if (typeof of !== 'string' || typeof at !== 'string' || Number.isNaN(Date.parse(at))) return null;
  if (regular !== null && (typeof regular !== 'string' || Number.isNaN(Date.parse(regular)))) return null;
  return { attempt, retry_of: of, at, regular_next: regular };
}

/**
 * The wait before the attempt after `failedAttempt` (1 for the first run), in milliseconds: the
 * back-off doubled once per attempt before, at most the policy's longest, ±10 % by `draw` in [0, 1).
 */
export function retryWaitMs(policy: RetryPolicy, failedAttempt: number, draw: number): number {
  const base = Math.min(policy.max_seconds, policy.backoff_seconds * 2 ** Math.max(0, failedAttempt - 1));
  return Math.round(base * 1000 * (1 - JITTER + 2 * JITTER * draw));
}

/**
 * The retry after a run that failed for a reason that may pass, or null when none is left: the
 * run was attempt `attempt.attempt` (1 without one) of `policy`, whose first attempt was
 * `attempt.retry_of` (this run, `runId`, without one). `regularNext` is the job's next regular
 * slot (null for a one-shot): a retry that would come at or after it is dropped.
 */
export function planRetry(
  policy: RetryPolicy | null,
  attempt: RetryAttempt | null,
  runId: string,
  now: Date,
  regularNext: string | null,
  draw: number,
): PendingRetry | null {
  const failed = attempt?.attempt ?? 1;
  if (!policy || failed > policy.times) return null;
  const at = new Date(now.getTime() + retryWaitMs(policy, failed, draw));
  if (regularNext !== null && Date.parse(regularNext) <= at.getTime()) return null;
  return { attempt: failed + 1, retry_of: attempt?.retry_of ?? runId, at: at.toISOString(), regular_next: regularNext };
}
