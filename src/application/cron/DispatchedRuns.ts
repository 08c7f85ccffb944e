import { inject, injectable, optional } from 'inversify';
import { describeTarget } from '../../domain/DeliveryTarget.js';
import { errorText } from '../../domain/errors.js';
import type { Clock } from '../ports/Clock.js';
import type { Logger } from '../ports/Logger.js';
import { NO_METRICS, type Metrics } from '../ports/Metrics.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { CronDeliveries } from './CronDeliveries.js';
import { JobExecution, type AnsweredRun } from './JobExecution.js';
import type { ClaimedJob, TickRun } from './RunDueJobs.js';

/** A start later than this after the slot was due is logged as late. */
export const LATE_START_MS = 1000;

/** A dispatched run as started. */
export interface StartedRun {
  /** Resolves once the run's answer is recorded and its slot is free; rejects when the run could not be recorded. */
  answered: Promise<AnsweredRun>;
  /** Ends the run once its slot was freed: its report told at once, or its answer handed to the platforms' lanes. */
  finish(ran: AnsweredRun): void;
}

/**
 * The runs of the jobs the gateway's dispatcher claimed (docs/gateway.md): each started at once,
 * a start more than a second after its slot logged as late and counted, and ended in one of two
 * ways. With the gateway's CronDeliveries, the run frees its slot once its answer is recorded and
 * the answer waits in the platforms' lanes; without them, the answer is delivered in the slot.
 * Either way the run is finished, for `onFinished`, once its answer was delivered; so is a run
 * whose answer a stopped gateway left waiting and this one delivered.
 */
@injectable()
export class DispatchedRuns {
  private readonly finishedListeners: Array<(run: TickRun) => void> = [];

  constructor(
    @inject(JobExecution) private readonly execution: JobExecution,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.Metrics) @optional() private readonly metrics: Metrics = NO_METRICS,
    /** The gateway's: answers are delivered in the platforms' lanes, after the slot is free. Without it, in the slot. */
    @inject(CronDeliveries) @optional() private readonly deliveries: CronDeliveries | null = null,
  ) {
    // A run delivered after a restart ends like any other.
    this.deliveries?.onDelivered((run) => {
      if (run.job) this.finished({ job: run.job, report: run.report });
    });
  }

  /** Called with each run as it ends, with its report: once its answer was delivered (or at once, with nothing to deliver). */
  onFinished(listener: (run: TickRun) => void): void {
    this.finishedListeners.push(listener);
  }

  /**
   * Starts the run of `claimed` now. `waitedForSlot` says the job was reported waiting for a free
   * run slot, which is then why a late start was late.
   */
  start({ job, dueAt }: ClaimedJob, options: { signal: AbortSignal; waitedForSlot: boolean }): StartedRun {
    const now = this.clock.now();
    // Claimed ahead of its slot: the run gets ready now and starts at the slot (JobExecution).
    const startedAt = now < dueAt ? dueAt : now;
    const lateMs = startedAt.getTime() - dueAt.getTime();
    if (lateMs > LATE_START_MS) {
      const why = options.waitedForSlot
        ? `every run slot was busy (cron.max_parallel_jobs is ${this.settings.maxParallelJobs})`
        : 'it was not running on time';
      this.log.warn(`job '${job.name}' started ${(lateMs / 1000).toFixed(1)} s late: ${why}`, { job: job.id, late_ms: lateMs });
    }
    this.log.info(`running job '${job.name}'`, { job: job.id });
    this.metrics.runStarted(Math.max(0, lateMs) / 1000);
    const runOptions = { signal: options.signal, slot: dueAt };
    const answered: Promise<AnsweredRun> = this.deliveries
      ? this.execution.answerClaimed(job, startedAt, runOptions)
      : this.execution.runClaimed(job, startedAt, runOptions).then((ran) => ({ ...ran, pending: null }));
    return {
      answered,
      finish: (ran) => {
        const seconds = () => (this.clock.now().getTime() - startedAt.getTime()) / 1000;
        if (ran.pending === null) {
          this.metrics.runFinished('cron', ran.report.outcome.status, seconds());
          this.finished({ job: ran.job ?? job, report: ran.report });
          return;
        }
        const where = ran.pending.toSend.map(describeTarget).join(', ');
        this.log.info(`job '${job.name}' answered; its answer waits in the delivery lane of ${where}`, {
          job: job.id,
          run: ran.pending.record.id,
        });
        void this.deliveries!.deliver(ran.pending).then((delivered) =>
          this.metrics.runFinished('cron', delivered.report.outcome.status, seconds()),
        );
      },
    };
  }

  private finished(run: TickRun): void {
    for (const listener of this.finishedListeners) {
      try {
        listener(run);
      } catch (error) {
        this.log.error(`a listener of finished runs failed: ${errorText(error)}`);
      }
    }
  }
}
