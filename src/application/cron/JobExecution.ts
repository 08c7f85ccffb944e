import { inject, injectable } from 'inversify';
import { executionIdOf } from '../../domain/botChat.js';
import type { Job } from '../../domain/Job.js';
import { finishRun } from '../../domain/jobLifecycle.js';
import { runError } from '../runs/runErrors.js';
import type { RunRecord, RunRequest } from '../../domain/runs/RunRecord.js';
import type { Logger } from '../ports/Logger.js';
import { TOKENS } from '../ports/tokens.js';
import { RunRecorder } from '../runs/RunRecorder.js';
import { answerRecordOf, finishedRecordOf, runningRecordOf, skippedRecordOf } from './cronRunRecords.js';
import type { AnswerToDeliver } from './JobAnswers.js';
import { cronRunKey, RunStops } from '../runs/RunStops.js';
import { JobPreflight, type Preflight } from './JobPreflight.js';
import { withSpend, type JobRunReport } from './JobRunReports.js';
import { JobRunMarks } from './JobRunMarks.js';
import { JobRunSteps, type StepsEnded } from './JobRunSteps.js';
import type { PendingJobDelivery } from './PendingJobDeliveries.js';

export type { PendingJobDelivery } from './PendingJobDeliveries.js';

/** How a run goes: its cancel, the slot it is for, and who asked for it by hand. */
export type RunOptions = { signal?: AbortSignal; slot?: Date | null; requested?: RunRequest };

/** The end of the agent's part of a run: a finished run, or an answer waiting for its delivery. */
export type AnsweredRun =
  { report: JobRunReport; job: Job | null; pending: null } | { report: null; job: Job | null; pending: PendingJobDelivery };

/**
 * The run path shared by the tick and `agent cron run` (docs/cron.md), on the run pipeline
 * (docs/architecture.md): pre-dispatch validation, the pre-run script, a fresh agent session, the
 * output file, delivery. It never throws: every ending is a RunOutcome, so the marking step always
 * has something to write.
 *
 * It claims, marks and records; the checks are JobPreflight's, the steps of a run JobRunSteps',
 * the answer and the notices JobAnswers', the marks on the job JobRunMarks' and the run ledger's
 * records RunRecorder's. An answer left to deliver later is PendingJobDeliveries'.
 */
@injectable()
export class JobExecution {
  constructor(
    @inject(JobPreflight) private readonly checks: JobPreflight,
    @inject(JobRunSteps) private readonly steps: JobRunSteps,
    /** Each run's time limit, and its cancel (docs/runs.md, Time limits and cancel). */
    @inject(RunStops) private readonly stops: RunStops,
    @inject(JobRunMarks) private readonly marks: JobRunMarks,
    @inject(RunRecorder) private readonly recorder: RunRecorder,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /**
   * Runs a job already claimed as `running` and then marks it: the run is counted
   * and `last_status` written on the job as it is stored now, so a pause made meanwhile holds.
   * Returns the report and the job as stored afterwards (null if it was removed meanwhile).
   *
   * `signal` cancels the run (the gateway stopping, a command stopped by a signal): the script's
   * and the agent's process trees are killed and the run is recorded as `interrupted:` followed by
   * the abort's reason when it is a string, which uses up its slot like any run.
   */
  async runClaimed(job: Job, startedAt: Date, options: RunOptions = {}): Promise<{ report: JobRunReport; job: Job | null }> {
    const ran = await this.runUntilAnswered(job, startedAt, options, false);
    if (ran.pending) throw new Error('a run that delivers at once left its delivery pending');
    return { report: ran.report, job: ran.job };
  }

  /**
   * The gateway's run of a claimed job (docs/delivery.md): as `runClaimed`, but an answer that
   * goes to a chat platform or bot-chat is not sent here. It is recorded in the run ledger
   * (durably, `delivery_pending`, claimed by the job's claimant), the run is counted and the job
   * released (`scheduled` or `completed`), and it is returned `pending`, for CronDeliveries to
   * send in each platform's lane. `last_status` is left as it was until then. When the ledger
   * cannot keep the answer, it is delivered here and now, as `runClaimed` does.
   */
  async answerClaimed(job: Job, startedAt: Date, options: RunOptions = {}): Promise<AnsweredRun> {
    return this.runUntilAnswered(job, startedAt, options, true);
  }

  /**
   * A slot skipped by the catch-up policy `skip` (docs/cron.md, Missed runs): nothing ran, so the
   * ledger's record is `skipped`, with the slot, no prompt, no model and `reason` as its error.
   * Returns the record's id.
   */
  async recordSkipped(job: Job, slot: Date, foundAt: Date, reason: string): Promise<string> {
    const record = skippedRecordOf(job, slot, foundAt, reason);
    await this.recorder.save(record);
    return record.id;
  }

  /**
   * A run of `job` that its process never ended (recovered as interrupted): the jobs that run
   * after it on a failure start now, as after any failed run (docs/cron.md, Chains).
   */
  async interrupted(job: Job, runId: string): Promise<void> {
    await this.marks.startFollowers(job, runId, 'error');
  }

  /** The `skipped` record of a slot that came while the job's run still ran (overlap policy `skip`, docs/cron.md). */
  private async recordOverlapSkip(job: Job, slot: Date): Promise<void> {
    const reason = `skipped: the run before was still running at ${slot.toISOString()} (overlap policy skip); next run at ${job.next_run_at ?? 'none'}`;
    this.log.info(`job '${job.name}' skipped its slot of ${slot.toISOString()}: its run before was still running`, { job: job.id });
    await this.recordSkipped(job, slot, this.recorder.now(), reason);
  }

  private async runUntilAnswered(job: Job, startedAt: Date, options: RunOptions, deliverLater: boolean): Promise<AnsweredRun> {
    const running = runningRecordOf(job, startedAt, options.slot, options.requested);
    // One trace per run (docs/traces.md): its records and log lines carry its id.
    const trace = this.recorder.trace({
      kind: 'cron_run',
      jobId: job.id,
      jobName: job.name,
      runId: running.id,
      slot: running.slot,
      ...(running.attempt !== undefined ? { attempt: running.attempt } : {}),
    });
    let ran: AnsweredRun | null = null;
    try {
      ran = await trace.within(() => this.runTraced(job, startedAt, options, deliverLater, running));
      // An answer left to deliver keeps its trace open: its delivery is part of it (CronDeliveries).
      if (ran.pending) ran.pending.trace = trace;
      return ran;
    } finally {
      if (!ran?.pending)
        trace.end(ran?.report ? { outcome: ran.report.outcome.status, error: runError(ran.report.outcome) } : { error: 'the run failed' });
    }
  }

  private async runTraced(job: Job, startedAt: Date, options: RunOptions, deliverLater: boolean, running: RunRecord): Promise<AnsweredRun> {
    // Claimed ahead of its slot (DispatchedRuns): it gets ready now and starts at `startedAt`.
    const startsInMs = Math.max(0, startedAt.getTime() - this.recorder.now().getTime());
    await this.recorder.started(running);
    const shown = this.recorder.showRunning(running, startsInMs);
    if (shown.writtenNow) await shown.writtenNow;
    let executed: StepsEnded;
    let preflight: Preflight;
    // The job's time limit counts from its start, and a cancel asked for from now on stops the run.
    const guard = this.stops.guard(cronRunKey(job.id, job.claim?.at), job.timeout_seconds, options.signal, startsInMs);
    const transcript = this.recorder.transcriptProgress(running);
    try {
      preflight = await this.checks.check(job);
      await this.stops.untilStart(startedAt, startedAt.getTime() - this.recorder.now().getTime(), guard.signal);
      executed = await this.steps.execute(job, startedAt, preflight, guard.signal, deliverLater, transcript.grew);
    } finally {
      guard.release();
      await shown.stop();
    }
    await transcript.final(executed.transcript);
    let report: JobRunReport;
    if ('answered' in executed) {
      const { targets, text, answeredBy, spend } = executed.answered;
      const pending = await this.recordAnswer(job, startedAt, running, executed.answered);
      if (pending !== null) {
        let skipped: Date | null = null;
        const counted = await this.marks.counted(job, { startedAt, onSkippedSlot: (slot) => (skipped = slot) });
        if (skipped && counted) await this.recordOverlapSkip(counted, skipped);
        return { report: null, job: counted, pending };
      }
      // The ledger cannot keep the answer: it is delivered now, in the run's slot.
      report = withSpend(await this.steps.answers.deliverNow(job, startedAt, targets, text, answeredBy), spend);
    } else {
      report = executed;
    }
    let skippedSlot: Date | null = null;
    const stored = await this.marks.ended(
      job,
      report.outcome,
      preflight.targets,
      (current, outcome, retry) => finishRun(current, outcome, startedAt, retry),
      false,
      report.retryable ? { runId: running.id } : null,
      { startedAt, onSkippedSlot: (slot) => (skippedSlot = slot) },
    );
    if (skippedSlot && stored) await this.recordOverlapSkip(stored, skippedSlot);
    // Retried: this attempt is linked to the ones after it (docs/runs.md, Retries).
    const retry = report.retryable && stored?.retry_pending?.attempt === (job.claim?.retry?.attempt ?? 1) + 1 ? stored.retry_pending : null;
    if (retry) {
      this.log.info(
        `job '${job.name}' failed and runs again at ${retry.at} (attempt ${retry.attempt}): ${runError(report.outcome) ?? ''}`,
        {
          job: job.id,
        },
      );
    }
    await this.recorder.saveFinal((now) => ({
      ...finishedRecordOf(running, report, now),
      ...(retry ? { attempt: retry.attempt - 1 } : {}),
    }));
    // The jobs that run after this one start now, once its run is recorded (docs/cron.md, Chains).
    if (!retry) await this.marks.startFollowers(job, running.id, report.outcome.status);
    return { report: { ...report, runId: running.id, traceId: this.recorder.traceId() }, job: stored, pending: null };
  }

  /**
   * The answer recorded in the ledger, durably, before its delivery: the pending delivery, or
   * null when the ledger could not take it (logged).
   */
  private async recordAnswer(
    job: Job,
    startedAt: Date,
    running: RunRecord,
    { targets, text, answeredBy, spend }: AnswerToDeliver['answered'],
  ): Promise<PendingJobDelivery | null> {
    const { record, failure } = await this.recorder.keepNow((now) => answerRecordOf(running, job, text, answeredBy, now, spend));
    if (failure !== null) {
      this.log.warn(`could not record the answer of job '${job.name}' before its delivery; delivering it now, in its run slot`, {
        job: job.id,
        error: failure,
      });
      return null;
    }
    const toSend = targets.filter((target) => target.kind === 'platform' || target.kind === 'bot-chat');
    return { job, startedAt, executionId: executionIdOf(job, startedAt), targets, toSend, text, record };
  }
}
