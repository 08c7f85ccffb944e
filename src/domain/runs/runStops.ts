/**
 * A run stopped before it finished on purpose (docs/runs.md, Time limits and cancel): it ran past
 * its time limit, or someone cancelled it. Either way its process trees are killed and it is
 * recorded `error` with the reason as its error; unlike a run the gateway's shutdown cut short
 * (`interrupted: …`), it is the run's own ending.
 */
import { ERROR_CODES } from '../errorCodes.js';
import { JobError } from '../errors.js';
import type { Job, JobClaim } from '../Job.js';
import { formatDuration } from '../durations.js';
import { toIsoUtc } from '../zonedTime.js';

/** Why a run was stopped: the abort reason of its signal. */
export class RunStop {
  private constructor(
    readonly kind: 'timeout' | 'cancel',
    /** The run's error, as recorded: `timed out after 10m`, `cancelled by alice`. */
    readonly message: string,
  ) {}

  static timedOut(limitSeconds: number): RunStop {
    return new RunStop('timeout', `timed out after ${formatDuration(limitSeconds)}`);
  }

  static cancelledBy(who: string): RunStop {
    return new RunStop('cancel', `cancelled by ${who}`);
  }
}

/** The stop a signal was aborted with, or null when it was aborted for another reason (or not at all). */
export function runStopOf(signal: AbortSignal | undefined): RunStop | null {
  return signal?.aborted && signal.reason instanceof RunStop ? signal.reason : null;
}

/**
 * Asks for the run under way of `job` to stop: the claim carries who asked and when, and the
 * process that holds it stops the run when it sees that. A job with no run under way is refused.
 */
export function requestCancel(job: Job, who: string, now: Date): Job {
  if (job.state !== 'running' || job.claim === null) {
    throw new JobError(ERROR_CODES.JOB.NOT_RUNNING, `Job '${job.name}' is ${job.state}, with no run under way to cancel.`);
  }
  const cancel = { by: who, at: toIsoUtc(now) };
  const asked = (claim: JobClaim): JobClaim => (claim.cancel ? claim : { ...claim, cancel });
  // Every run of the job: its runs may overlap (domain/jobRunsBeside.ts).
  const beside = job.claims_beside?.length ? { claims_beside: job.claims_beside.map(asked) } : {};
  return { ...job, claim: asked(job.claim), ...beside };
}
