/**
 * What a cron run's end writes on its job: the run counted, `last_status` and its detail fields,
 * the pause after `cron.pause_after_failures` failed runs, and the recovery or pause notice.
 * Written on the job as it is stored now, so that a pause made meanwhile holds.
 */
import { inject, injectable, optional } from 'inversify';
import type { DeliveryTarget } from '../../domain/DeliveryTarget.js';
import type { Job } from '../../domain/Job.js';
import { countRun, isFailedRun, pauseJob } from '../../domain/jobLifecycle.js';
import { settleOverlap } from '../../domain/jobCatchUp.js';
import { jobTimeZone } from '../../domain/Job.js';
import { planRetry, type PendingRetry, type RandomDraw } from '../../domain/retries.js';
import { isRecurring } from '../../domain/Schedule.js';
import { pausedAfterFailuresReason } from '../../domain/response.js';
import type { LastStatus, RunOutcome } from '../../domain/RunOutcome.js';
import { followerStarted, followersOf } from '../../domain/jobChains.js';
import { claimsOf, endOwnRun, sameClaim } from '../../domain/jobRunsBeside.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { runError } from '../runs/runErrors.js';
import { JobAnswers } from './JobAnswers.js';
import { RunEvents } from '../events/RunEvents.js';

/** A run whose end settles a slot that came while it ran (the overlap policy): when it started, and who records a skipped slot. */
export interface OverlapWatch {
  startedAt: Date;
  onSkippedSlot: (slot: Date) => void;
}

/** Marks the ends of cron runs on their jobs. */
@injectable()
export class JobRunMarks {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(JobAnswers) private readonly answers: JobAnswers,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    /** The `job.paused` event of a pause after failures; without it (tests that build the run path by hand), none. */
    @inject(RunEvents) @optional() private readonly events: RunEvents | null = null,
    /** The jitter of retries' waits; Math.random without it. */
    @inject(TOKENS.Random) @optional() private readonly random: RandomDraw = Math.random,
  ) {}

  /** The run of a job whose answer waits for its delivery is counted, and the job released; the job as stored afterwards. */
  counted(job: Job, overlap?: OverlapWatch): Promise<Job | null> {
    return this.repository.updateById(job.id, (current) => {
      // The run's own claim is let go; runs beside it (overlap `allow`) go on.
      const counted = endOwnRun(current, job.claim, (each) => (overlap ? this.afterOverlap(countRun(each), overlap) : countRun(each)));
      return { job: counted, result: counted };
    });
  }

  /**
   * A slot that came while the run ran, under the job's overlap policy (settleOverlap): skipped
   * (told to `onSkippedSlot`, for its record) or left due, to run at once.
   */
  private afterOverlap(job: Job, { startedAt, onSkippedSlot }: OverlapWatch): Job {
    const { job: settled, skipped } = settleOverlap(job, startedAt, this.clock.now(), jobTimeZone(job, this.settings.timeZone));
    if (skipped) onSkippedSlot(skipped);
    return settled;
  }

  /**
   * Writes `last_status` (through `mark`), pauses the job after `cron.pause_after_failures`
   * failed runs, and sends the recovery or pause notice; the job as stored afterwards.
   */
  async ended(
    job: Job,
    outcome: RunOutcome,
    targets: DeliveryTarget[],
    mark: (current: Job, outcome: RunOutcome, retry: PendingRetry | null) => Job,
    noticesInBackground = false,
    /** A run that failed for a reason that may pass (docs/runs.md, Retries): its id, for the retry's link to it. */
    retryable: { runId: string } | null = null,
    /** Told the slot that came while the run ran and is skipped (the overlap policy `skip`); without it, slots are left as `mark` leaves them. */
    overlap?: OverlapWatch,
  ): Promise<Job | null> {
    const pauseAfter = this.settings.pauseAfterFailures ?? 0;
    let pausedBecause: string | null = null;
    let retry: PendingRetry | null = null;
    const stored = await this.repository.updateById(job.id, (current) => {
      // A run that ends while others of the job run beside it (overlap `allow`) is not retried: the next slot comes soon.
      retry = retryable && claimsOf(current).every((claim) => sameClaim(claim, job.claim)) ? this.retryOf(current, retryable.runId) : null;
      let finished = endOwnRun(current, job.claim, (each) => {
        const marked = mark(each, outcome, retry);
        return overlap ? this.afterOverlap(marked, overlap) : marked;
      });
      const inService = finished.state === 'scheduled' || finished.state === 'running';
      if (!retry && pauseAfter > 0 && isFailedRun(outcome) && finished.failure_streak >= pauseAfter && inService) {
        pausedBecause = pausedAfterFailuresReason(finished.failure_streak, runError(outcome) ?? '');
        finished = pauseJob(finished, this.clock.now(), pausedBecause);
      }
      return { job: finished, result: finished };
    });
    if (pausedBecause !== null && stored) await this.events?.jobPaused({ state: 'scheduled' }, stored);
    if (retry !== null) return stored;
    // The failure notice of a failure that could have passed waited for its last attempt: this one.
    if (retryable) await this.answers.notifyFailure(job, targets, runError(outcome) ?? '');
    const notices = this.answers.noticesAfter(job, outcome, targets, pausedBecause);
    // From a delivery lane, a notice to a platform that hangs must not hold up the lane.
    if (noticesInBackground) void notices;
    else await notices;
    return stored;
  }

  /**
   * The retry after the failed run `runId` of `current` (as stored at its end), under the job's
   * policy or `cron.retry`; null when none is left, when the job was paused meanwhile, or when
   * the retry would not come before its next regular slot.
   */
  private retryOf(current: Job, runId: string): PendingRetry | null {
    if (current.state !== 'running') return null;
    const policy = current.retry ?? this.settings.retry ?? null;
    const regularNext = isRecurring(current.schedule) ? current.next_run_at : null;
    return planRetry(policy, current.claim?.retry ?? null, runId, this.clock.now(), regularNext, this.random());
  }

  /**
   * The jobs that run after `job` when its run `runId` ended with `status` (docs/cron.md, Chains):
   * each matching follower is due now, with the run recorded on it, once per run (a follower
   * that has this run recorded already is left as it is, whoever got there first).
   */
  async startFollowers(job: Job, runId: string, status: LastStatus): Promise<void> {
    // Only the jobs that follow this one are read: most jobs have none, and a store of many jobs is not read at every run's end.
    const followers = followersOf(await this.repository.followersOf(job.id), job.id);
    const ended = { job: job.id, run_id: runId, status, at: this.clock.now() };
    for (const { job: follower } of followers) {
      await this.repository.updateById(follower.id, (current) => {
        const started = followerStarted(current, ended);
        return { job: started ?? current, result: null };
      });
    }
  }

  /** The job `id` as stored now; null when it was removed. */
  async current(id: string): Promise<Job | null> {
    return (await this.repository.load()).jobs.find((each) => each.id === id) ?? null;
  }
}
