import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import { claimBeside, runsBeside } from '../../domain/jobRunsBeside.js';
import { claimFiredSlot } from '../../domain/jobLifecycle.js';
import { errorText } from '../../domain/errors.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { Logger } from '../ports/Logger.js';
import type { ProcessIdentity } from '../ports/ProcessIdentity.js';
import type { FireOutcome } from '../ports/SchedulerProvider.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { DispatchDueJobs } from './DispatchDueJobs.js';
import type { ClaimedJob } from './RunDueJobs.js';

export interface FireJobSlotInput {
  jobId: string;
  /** The slot fired, as the provider sent it (an ISO 8601 instant). */
  fireAt: string;
}

/** How long a caller is asked to wait before firing again when the store could not be read. */
export const STORE_RETRY_AFTER_SECONDS = 5;
/** How long a caller is asked to wait before firing again while this gateway stops (another, or the next start, answers). */
export const STOPPING_RETRY_AFTER_SECONDS = 10;

/**
 * A provider fired one slot of one job: claims it by compare-and-set, in one write
 * to the store, and starts its run without waiting for it. Only a job that is scheduled, enabled
 * and whose `next_run_at` is the very instant fired is claimed, so of several fires of one slot —
 * on this gateway or on others sharing the store — exactly one runs. The provider's clock decides
 * when: a slot still ahead on ours runs at once.
 *
 * Fires of one slot that arrive here while one of them is being claimed do not go to the store
 * again: they get that claim's answer, except that once it is accepted they are `stale` (the slot
 * is taken), so a portal retrying a fire costs no second claim in the store.
 *
 * The run takes a run slot shared with the built-in dispatcher (`cron.max_parallel_jobs`); when
 * every slot is busy the claimed run waits for the next one free. It never throws.
 */
@injectable()
export class FireJobSlot {
  /** The claim under way of each slot being fired, by job id and instant. */
  private readonly claiming = new Map<string, Promise<FireOutcome>>();

  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.ProcessIdentity) private readonly identity: ProcessIdentity,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(DispatchDueJobs) private readonly dispatcher: DispatchDueJobs,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  async execute(input: FireJobSlotInput): Promise<FireOutcome> {
    const fireAt = new Date(Date.parse(input.fireAt));
    const slot = `${input.jobId}\n${fireAt.getTime()}`;
    const underWay = this.claiming.get(slot);
    if (underWay) {
      const first = await underWay;
      if (first.status === 'unavailable') return first;
      const outcome: FireOutcome = first.status === 'accepted' ? { status: 'stale' } : first;
      this.log.info(`fire of job ${input.jobId} for ${input.fireAt}: ${outcome.status}`, { job: input.jobId });
      return outcome;
    }
    const claim = this.claimSlot(input, fireAt);
    this.claiming.set(slot, claim);
    try {
      return await claim;
    } finally {
      this.claiming.delete(slot);
    }
  }

  private async claimSlot(input: FireJobSlotInput, fireAt: Date): Promise<FireOutcome> {
    try {
      const outcome = await this.dispatcher.claimWith(() => this.claim(input.jobId, fireAt));
      if (outcome === null) return { status: 'unavailable', retryAfterSeconds: STOPPING_RETRY_AFTER_SECONDS };
      if (outcome.status !== 'accepted')
        this.log.info(`fire of job ${input.jobId} for ${input.fireAt}: ${outcome.status}`, { job: input.jobId });
      return outcome;
    } catch (error) {
      this.log.error(`a fire of job ${input.jobId} could not be claimed: ${errorText(error)}`, { job: input.jobId });
      return { status: 'unavailable', retryAfterSeconds: STORE_RETRY_AFTER_SECONDS };
    }
  }

  /** Calls `listener` with a job's id each time one of its runs (fired or not) has ended and freed its slot. */
  onRunFinished(listener: (jobId: string) => void): void {
    this.dispatcher.onJobReleased(listener);
  }

  private async claim(jobId: string, fireAt: Date): Promise<{ claimed: ClaimedJob | null; result: FireOutcome }> {
    type Claim = { claimed: ClaimedJob | null; result: FireOutcome };
    const claim = await this.repository.updateById<Claim>(jobId, (job) => {
      const verdict = slotVerdict(job, fireAt);
      if (verdict !== 'claim') return { job, result: { claimed: null, result: { status: verdict } } };
      const now = this.clock.now();
      if (job.state === 'running') {
        // A slot of a job whose runs may overlap (overlap `allow`), fired while it runs: claimed beside its run.
        const from = fireAt.getTime() > now.getTime() ? fireAt : now;
        const { stored, run } = claimBeside(job, this.identity.claimant(), now, this.settings.timeZone, from);
        return { job: stored, result: { claimed: { job: run, dueAt: now }, result: { status: 'accepted', jobId } } };
      }
      const claimed = claimFiredSlot(job, this.identity.claimant(), now, fireAt, this.settings.timeZone);
      return { job: claimed, result: { claimed: { job: claimed, dueAt: now }, result: { status: 'accepted', jobId } } };
    });
    return claim ?? { claimed: null, result: { status: 'gone' } };
  }
}

/**
 * What a fire of `fireAt` means for `job`: a paused or completed job is gone (the portal must not
 * retry); a running one was fired already, and another instant was fired already or rescheduled.
 */
function slotVerdict(job: Job, fireAt: Date): 'claim' | 'gone' | 'stale' {
  if (job.state === 'paused' || job.state === 'completed' || !job.enabled || job.next_run_at === null) return 'gone';
  if (job.state === 'running' && !runsBeside(job)) return 'stale';
  return Date.parse(job.next_run_at) === fireAt.getTime() ? 'claim' : 'stale';
}
