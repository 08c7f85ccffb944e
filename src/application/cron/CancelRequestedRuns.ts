import { inject, injectable } from 'inversify';
import { claimsOf } from '../../domain/jobRunsBeside.js';
import { errorText } from '../../domain/errors.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { Logger } from '../ports/Logger.js';
import type { Timer } from '../ports/Timer.js';
import { TOKENS } from '../ports/tokens.js';
import { cronRunKey, RunStops } from '../runs/RunStops.js';

/**
 * How long after a change to the job store the runs are looked at: changes that come in a burst
 * (a thousand runs ending) make one look, and a cancel still stops its run well within 2 s.
 */
export const CANCEL_LOOK_AFTER_MS = 300;

const CRON_RUNS = 'cron:';

/**
 * Stops the cron runs of this process that someone asked to cancel from another process
 * (CancelJobRun): whoever watches the job store (the gateway, `agent cron run`) calls `changed`
 * on every change, and the running jobs are read once for the lot, only while this process
 * runs any.
 */
@injectable()
export class CancelRequestedRuns {
  private looking: Promise<void> | null = null;
  private again = false;

  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(RunStops) private readonly stops: RunStops,
    @inject(TOKENS.Timer) private readonly timer: Timer,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /** The job store may have changed: a look follows shortly, unless one is waiting already. */
  changed(): void {
    if (this.looking) {
      this.again = true;
      return;
    }
    if (this.stops.underWay(CRON_RUNS).length === 0) return;
    this.looking = this.timer
      .wait(CANCEL_LOOK_AFTER_MS, undefined, { background: true })
      .then(() => this.look())
      .catch((error: unknown) => this.log.warn(`could not look for cancelled runs: ${errorText(error)}`))
      .finally(() => {
        this.looking = null;
        if (this.again) {
          this.again = false;
          this.changed();
        }
      });
  }

  /** Settles once the look under way, if any, is done (for tests and shutdown). */
  settled(): Promise<void> {
    return this.looking ?? Promise.resolve();
  }

  /** Stops each run of this process whose job's claim asks for it. */
  async look(): Promise<void> {
    const mine = new Set(this.stops.underWay(CRON_RUNS));
    if (mine.size === 0) return;
    const { running } = await this.repository.peek(new Date(0));
    for (const job of running) {
      // Each run of the job (its runs may overlap: domain/jobRunsBeside.ts).
      for (const claim of claimsOf(job)) {
        const { cancel } = claim;
        const key = cronRunKey(job.id, claim.at);
        if (!cancel || !mine.has(key.slice(CRON_RUNS.length))) continue;
        if (this.stops.cancel(key, cancel.by)) {
          this.log.info(`cancelling the run of job '${job.name}', as ${cancel.by} asked`, { job: job.id });
        }
      }
    }
  }
}
