import { inject, injectable } from 'inversify';
import { describeTarget } from '../../domain/DeliveryTarget.js';
import { errorText } from '../../domain/errors.js';
import type { RunDelivery } from '../../domain/runs/RunRecord.js';
import type { DeliveryLanes } from '../delivery/DeliveryLanes.js';
import type { Logger } from '../ports/Logger.js';
import type { Timer } from '../ports/Timer.js';
import { TOKENS } from '../ports/tokens.js';
import { PendingJobDeliveries, type PendingJobDelivery } from './PendingJobDeliveries.js';
import { laneOf } from '../runs/AnswerDelivery.js';
import { LeftOverCronAnswers } from './LeftOverCronAnswers.js';
import { runError } from '../runs/runErrors.js';
import type { JobRunReport } from './JobRunReports.js';
import type { Job } from '../../domain/Job.js';

/** The cron runs' deliveries among the others in the gateway's lanes. */
const LANE_GROUP = 'cron';

/** How a pending delivery ended: the run's report and its job as stored afterwards. */
export interface DeliveredRun {
  job: Job | null;
  /** The job's id (the job may have been removed meanwhile). */
  jobId: string;
  report: JobRunReport;
}

/**
 * The gateway's cron deliveries (docs/delivery.md): the answers of cron runs, recorded in the run
 * ledger with their run slot already free, sent target by target in the platform's lane of the
 * gateway's DeliveryLanes (the lanes webhook answers wait in), so that a platform that hangs holds
 * up only what goes to it. Once every target of a run answered, the run is finished
 * (PendingJobDeliveries.finish: report, `last_status`, the ledger's record).
 *
 * At start (`resumeLeftOver`) it sends the answers that a stopped or killed gateway left waiting,
 * as LeftOverCronAnswers claims them, to the targets they have not reached, without running the
 * agent again. `stop` gives the deliveries under way the grace period; what still waits then
 * stays in the ledger for the next start.
 */
@injectable()
export class CronDeliveries {
  private readonly listeners: Array<(run: DeliveredRun) => void> = [];

  constructor(
    @inject(PendingJobDeliveries) private readonly pendings: PendingJobDeliveries,
    @inject(TOKENS.DeliveryLanes) private readonly lanes: DeliveryLanes,
    @inject(LeftOverCronAnswers) private readonly leftOver: LeftOverCronAnswers,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.Timer) private readonly timer: Timer,
  ) {}

  /** Called with each run whose delivery ended, with its final report. */
  onDelivered(listener: (run: DeliveredRun) => void): void {
    this.listeners.push(listener);
  }

  /** Deliveries waiting or under way. */
  get size(): number {
    return this.lanes.size(LANE_GROUP);
  }

  /**
   * Queues each target of `pending` in its lane; resolves with how the delivery ended, once every
   * target answered (or at once, with nothing to send). When the lanes take nothing more (the
   * gateway stopping) the answer stays recorded for the next start, and this never resolves.
   */
  deliver(pending: PendingJobDelivery): Promise<DeliveredRun> {
    return new Promise((resolve) => {
      const sent: RunDelivery[] = [];
      let left = pending.toSend.length;
      let saving: Promise<void> = Promise.resolve();
      // The delivery is part of the run's trace, which it ends (docs/traces.md).
      const traced = <T>(work: () => Promise<T>): Promise<T> => (pending.trace ? pending.trace.within(work) : work());
      const finish = async () => {
        await saving;
        let run: DeliveredRun;
        try {
          const { report, job } = await traced(() => this.pendings.finish(pending, sent));
          pending.trace?.end({ outcome: report.outcome.status, error: runError(report.outcome) });
          run = { job, jobId: pending.job.id, report: { ...report, traceId: pending.trace?.traceId ?? pending.record.trace_id ?? null } };
        } catch (error) {
          pending.trace?.end({ error: errorText(error) });
          // The store away: the record stays pending, and the next start delivers what is missing.
          this.log.error(
            `the delivery of run ${pending.record.id} of job '${pending.job.name}' could not be recorded: ${errorText(error)}`,
            { job: pending.job.id },
          );
          return;
        }
        for (const listener of this.listeners) {
          try {
            listener(run);
          } catch (error) {
            this.log.error(`a listener of cron deliveries failed: ${errorText(error)}`);
          }
        }
        resolve(run);
      };
      if (left === 0) {
        void finish();
        return;
      }
      for (const target of pending.toSend) {
        const queued = this.lanes.push(laneOf(target), {
          group: LANE_GROUP,
          deliver: async () => {
            const result = await traced(() => this.pendings.deliverTo(pending, target));
            sent.push(...result);
            left -= 1;
            if (left > 0) {
              // What got through so far is kept, so that a restart sends only the rest.
              const progress = [...sent];
              saving = saving.then(() => this.pendings.recordProgress(pending, progress));
              return;
            }
            await finish();
          },
        });
        if (!queued)
          this.log.info(`the answer of run ${pending.record.id} to ${describeTarget(target)} waits for the next start`, {
            job: pending.job.id,
          });
      }
    });
  }

  /**
   * Claims the cron answers left waiting by processes that are gone and queues them in the
   * lanes; resolves once they are queued, with how many there were. Never throws: a ledger that
   * cannot be read is logged, and the answers wait for the next start (LeftOverCronAnswers).
   */
  resumeLeftOver(): Promise<number> {
    return this.leftOver.takeOver((pending) => void this.deliver(pending));
  }

  /**
   * Lets the deliveries under way and waiting finish for up to `graceMs`; then queues nothing
   * more, and waits up to `abortWaitMs` for those under way. What still waits stays recorded:
   * the next start delivers it. Resolves true when all finished in time.
   */
  async stop(graceMs: number, abortWaitMs = 5000): Promise<boolean> {
    if (await this.idleWithin(graceMs)) return true;
    const left = this.lanes.stopTaking(LANE_GROUP);
    if (left.length > 0) this.log.warn(`${left.length} cron answer(s) still waiting for delivery will be delivered after the next start`);
    await this.idleWithin(abortWaitMs);
    return false;
  }

  private async idleWithin(ms: number): Promise<boolean> {
    if (this.size === 0) return true;
    const cancel = new AbortController();
    const idle = await Promise.race([
      this.lanes.whenIdle(LANE_GROUP).then(() => true),
      this.timer.wait(ms, cancel.signal).then(() => false),
    ]);
    cancel.abort();
    return idle;
  }
}
