/**
 * Cron answers recorded before their delivery (the gateway's runs, docs/delivery.md): each sent
 * to its targets in their platforms' lanes, its progress kept so that a restart sends it only to
 * the others, and its end marked on the job and in the ledger. A pending delivery left by a
 * stopped process is taken up again here.
 */
import { inject, injectable } from 'inversify';
import type { TraceHandle } from '../ports/RunTracing.js';
import { describeTarget, type DeliveryTarget } from '../../domain/DeliveryTarget.js';
import { executionIdOf } from '../../domain/botChat.js';
import type { Job } from '../../domain/Job.js';
import { markRunOutcome } from '../../domain/jobLifecycle.js';
import { mergeDeliveries } from '../../domain/runs/redelivery.js';
import type { RunDelivery, RunRecord } from '../../domain/runs/RunRecord.js';
import type { Logger } from '../ports/Logger.js';
import { TOKENS } from '../ports/tokens.js';
import { RunRecorder } from '../runs/RunRecorder.js';
import { deliveredRecordOf, undeliverableRecordOf } from './cronRunRecords.js';
import { JobAnswers } from './JobAnswers.js';
import { JobPreflight } from './JobPreflight.js';
import type { JobRunReport } from './JobRunReports.js';
import { JobRunMarks } from './JobRunMarks.js';

/**
 * A gateway's cron run whose answer is recorded (durably, in the run ledger) and whose delivery
 * is still to be made, target by target, each in its platform's lane (CronDeliveries). Its run
 * slot is free and its job back in service; `last_status` is written once every target answered.
 */
export interface PendingJobDelivery {
  /** The job as its run was claimed (its failure streak the one before the run, for notices). */
  job: Job;
  startedAt: Date;
  /** The bot-chat execution id of the run, the same after a restart. */
  executionId: string;
  /** Every target of the run, `local` included: the outcome is computed over them all. */
  targets: DeliveryTarget[];
  /** The targets still to be sent to (chat platforms and bot-chat), in order. */
  toSend: DeliveryTarget[];
  /** The answer, as the agent gave it. */
  text: string;
  /** The run's record as saved: `running`, with the answer, `delivery_pending`, claimed by this process. */
  record: RunRecord;
  /** The run's trace, still open, which its delivery ends (docs/traces.md); absent for an answer left by an earlier start. */
  trace?: TraceHandle;
}

/** Delivers the answers of cron runs recorded before their delivery. */
@injectable()
export class PendingJobDeliveries {
  constructor(
    @inject(JobAnswers) private readonly answers: JobAnswers,
    @inject(JobRunMarks) private readonly marks: JobRunMarks,
    @inject(JobPreflight) private readonly checks: JobPreflight,
    @inject(RunRecorder) private readonly recorder: RunRecorder,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /** Sends a pending answer to one of its targets (in that target's lane), and says how it went; never throws. */
  deliverTo(pending: PendingJobDelivery, target: DeliveryTarget): Promise<RunDelivery[]> {
    return this.answers.sendAnswer(pending.job, pending.executionId, [target], pending.text);
  }

  /**
   * Keeps how a pending answer went to the targets tried so far (still `delivery_pending`), so
   * that a restart sends it only to the others. Logged when the ledger cannot take it.
   */
  async recordProgress(pending: PendingJobDelivery, sent: RunDelivery[]): Promise<void> {
    await this.recorder.save({ ...pending.record, deliveries: mergeDeliveries(pending.record.deliveries, sent) });
  }

  /**
   * The end of a pending delivery, once every target answered: the run report is written, the
   * job's `last_status` and detail fields say how it went (unless a later run of the job was
   * marked already), the recovery or pause notice is sent (in the background), and the ledger's
   * record is finished, without the claim. The report and the job as stored afterwards.
   */
  async finish(pending: PendingJobDelivery, sent: RunDelivery[]): Promise<{ report: JobRunReport; job: Job | null }> {
    const { job, startedAt, text, record } = pending;
    const deliveries = mergeDeliveries(record.deliveries, sent);
    const finished = await this.answers.finish(job, startedAt, pending.targets, deliveries, text, record.model);
    const stored = await this.marks.ended(
      job,
      finished.outcome,
      pending.targets,
      (current, result) => markRunOutcome(current, result, startedAt),
      true,
    );
    await this.recorder.saveFinal((now) => deliveredRecordOf(record, finished.outcome, finished.deliveries, now));
    await this.marks.startFollowers(job, record.id, finished.outcome.status);
    return { report: { ...finished, runId: record.id }, job: stored };
  }

  /**
   * A pending delivery left by a stopped process, claimed by this one (`record`, as claimed): its
   * answer goes to the job's targets it has not reached yet. A job removed meanwhile, or targets
   * that cannot be resolved now, end the run `delivery_failed` here; null then.
   */
  async resume(record: RunRecord): Promise<PendingJobDelivery | null> {
    const job = await this.marks.current(record.subject);
    const startedAt = new Date(record.started_at);
    const fail = async (why: string): Promise<null> => {
      this.log.warn(`the answer of run ${record.id} cannot be delivered: ${why}`, { job: record.subject, run: record.id });
      await this.recorder.saveFinal((now) => undeliverableRecordOf(record, why, now));
      return null;
    };
    if (job === null) return fail('its job was removed before the answer was delivered');
    if (record.answer === null) return fail('the run record holds no answer');
    const resolved = await this.checks.deliveryTargets(job);
    if ('error' in resolved) return fail(resolved.error);
    const reached = new Set(record.deliveries.filter((delivery) => delivery.outcome !== 'failed').map((delivery) => delivery.target));
    const toSend = resolved.targets.filter(
      (target) => (target.kind === 'platform' || target.kind === 'bot-chat') && !reached.has(describeTarget(target)),
    );
    const problems: RunDelivery[] = resolved.problems
      .filter((each) => !reached.has(each.target))
      .map((each) => ({ target: each.target, outcome: 'failed', message_ids: [], error: each.problem }));
    return {
      job,
      startedAt,
      executionId: executionIdOf(job, startedAt),
      targets: resolved.targets,
      toSend,
      text: record.answer,
      record: { ...record, deliveries: mergeDeliveries(record.deliveries, problems) },
    };
  }
}
