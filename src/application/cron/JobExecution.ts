import { inject, injectable, optional } from 'inversify';
import { describeTarget, type DeliveryTarget } from '../../domain/DeliveryTarget.js';
import type { Job } from '../../domain/Job.js';
import { countRun, finishRun, isFailedRun, markRunOutcome, pauseJob } from '../../domain/jobLifecycle.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import { pausedAfterFailuresReason } from '../../domain/response.js';
import type { AgentRunner } from '../ports/AgentRunner.js';
import type { BotChatDelivery } from '../ports/BotChatDelivery.js';
import type { MemoryStore, SkillLibrary } from '../ports/ContextFiles.js';
import type { DeliveryChannel } from '../ports/DeliveryChannel.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { Logger } from '../ports/Logger.js';
import type { RunOutputStore } from '../ports/RunOutputStore.js';
import type { RunLedger } from '../ports/RunLedger.js';
import type { Clock } from '../ports/Clock.js';
import type { Timer } from '../ports/Timer.js';
import type { RunDelivery, RunRecord } from '../../domain/runs/RunRecord.js';
import { mergeDeliveries, outcomeOfDeliveries } from '../../domain/runs/redelivery.js';
import type { ScriptExecutor } from '../ports/ScriptExecutor.js';
import { JobPreflight, type Preflight } from './JobPreflight.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { errorText } from '../../domain/errors.js';
import { executionIdOf } from '../../domain/botChat.js';
import { JobAnswerDelivery, type AnswerToDeliver } from './JobAnswerDelivery.js';
import { runError } from './jobRunErrors.js';
import {
  answerRecordOf,
  deliveredRecordOf,
  finishedRecordOf,
  JobRunRecorder,
  runningRecordOf,
  skippedRecordOf,
  undeliverableRecordOf,
} from './JobRunRecorder.js';
import { JobRunReports, type JobRunReport } from './JobRunReports.js';
import { JobRunSteps } from './JobRunSteps.js';

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
}

/** The end of the agent's part of a run: a finished run, or an answer waiting for its delivery. */
export type AnsweredRun =
  { report: JobRunReport; job: Job | null; pending: null } | { report: null; job: Job | null; pending: PendingJobDelivery };

/**
 * The run path shared by the tick and `agent cron run` (docs/cron.md): pre-dispatch validation,
 * the pre-run script, a fresh agent session, the output file, delivery. It never throws: every
 * ending is a RunOutcome, so the marking step always has something to write.
 *
 * It claims, marks and records; the steps of a run are JobRunSteps', the answer and the notices
 * JobAnswerDelivery's, the output file JobRunReports' and the run ledger's records JobRunRecorder's.
 */
@injectable()
export class JobExecution {
  private readonly checks: JobPreflight;
  private readonly answers: JobAnswerDelivery;
  private readonly reports: JobRunReports;
  private readonly recorder: JobRunRecorder;
  private readonly steps: JobRunSteps;

  constructor(
    @inject(TOKENS.JobRunAgentRunner) agent: AgentRunner,
    @inject(TOKENS.DeliveryChannel) channel: DeliveryChannel,
    @inject(TOKENS.RunOutputStore) outputs: RunOutputStore,
    @inject(TOKENS.MemoryStore) memory: MemoryStore,
    @inject(TOKENS.SkillLibrary) skills: SkillLibrary,
    @inject(TOKENS.ScriptExecutor) scripts: ScriptExecutor,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.BotChatDelivery) botChat: BotChatDelivery,
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    /** Without it (tests that build this by hand), a run is in the ledger as running from its start. */
    @inject(TOKENS.Timer) @optional() timer: Timer | null = null,
  ) {
    this.checks = new JobPreflight(agent, channel, scripts, settings, botChat);
    this.reports = new JobRunReports(outputs, settings, log);
    this.answers = new JobAnswerDelivery(channel, botChat, settings, log, this.reports);
    this.recorder = new JobRunRecorder(ledger, log, timer);
    this.steps = new JobRunSteps(agent, memory, skills, scripts, settings, log, this.checks, this.answers, this.reports);
  }

  /**
   * Runs a job already claimed as `running` and then marks it: the run is counted
   * and `last_status` written on the job as it is stored now, so a pause made meanwhile holds.
   * Returns the report and the job as stored afterwards (null if it was removed meanwhile).
   *
   * `signal` cancels the run (the gateway stopping, a command stopped by a signal): the script's
   * and the agent's process trees are killed and the run is recorded as `interrupted:` followed by
   * the abort's reason when it is a string, which uses up its slot like any run.
   */
  async runClaimed(
    job: Job,
    startedAt: Date,
    options: { signal?: AbortSignal; slot?: Date | null } = {},
  ): Promise<{ report: JobRunReport; job: Job | null }> {
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
  async answerClaimed(job: Job, startedAt: Date, options: { signal?: AbortSignal; slot?: Date | null } = {}): Promise<AnsweredRun> {
    return this.runUntilAnswered(job, startedAt, options, true);
  }

  private async runUntilAnswered(
    job: Job,
    startedAt: Date,
    options: { signal?: AbortSignal; slot?: Date | null },
    deliverLater: boolean,
  ): Promise<AnsweredRun> {
    const running = runningRecordOf(job, startedAt, options.slot);
    const shown = this.recorder.showRunning(running);
    if (shown.writtenNow) await shown.writtenNow;
    let executed: JobRunReport | AnswerToDeliver;
    let preflight: Preflight;
    try {
      preflight = await this.checks.check(job);
      executed = await this.steps.execute(job, startedAt, preflight, options.signal, deliverLater);
    } finally {
      await shown.stop();
    }
    let report: JobRunReport;
    if ('answered' in executed) {
      const { targets, text, answeredBy } = executed.answered;
      const pending = await this.recordAnswer(job, startedAt, running, targets, text, answeredBy);
      if (pending !== null) {
        const stored = await this.repository.updateById(job.id, (current) => {
          const counted = countRun(current);
          return { job: counted, result: counted };
        });
        return { report: null, job: stored, pending };
      }
      // The ledger cannot keep the answer: it is delivered now, in the run's slot.
      report = await this.answers.deliverAnswer(job, startedAt, targets, text, answeredBy, false);
    } else {
      report = executed;
    }
    const stored = await this.markEnded(job, report.outcome, preflight.targets, (current, outcome) =>
      finishRun(current, outcome, startedAt),
    );
    await this.recorder.save(finishedRecordOf(running, report, this.clock.now()));
    return { report: { ...report, runId: running.id }, job: stored, pending: null };
  }

  /**
   * Writes `last_status` (through `mark`), pauses the job after `cron.pause_after_failures`
   * failed runs, and sends the recovery or pause notice; the job as stored afterwards.
   */
  private async markEnded(
    job: Job,
    outcome: RunOutcome,
    targets: DeliveryTarget[],
    mark: (current: Job, outcome: RunOutcome) => Job,
    noticesInBackground = false,
  ): Promise<Job | null> {
    const pauseAfter = this.settings.pauseAfterFailures ?? 0;
    let pausedBecause: string | null = null;
    const stored = await this.repository.updateById(job.id, (current) => {
      let finished = mark(current, outcome);
      if (pauseAfter > 0 && isFailedRun(outcome) && finished.failure_streak >= pauseAfter && finished.state === 'scheduled') {
        pausedBecause = pausedAfterFailuresReason(finished.failure_streak, runError(outcome) ?? '');
        finished = pauseJob(finished, this.clock.now(), pausedBecause);
      }
      return { job: finished, result: finished };
    });
    const notices = this.answers.noticesAfter(job, outcome, targets, pausedBecause);
    // From a delivery lane, a notice to a platform that hangs must not hold up the lane.
    if (noticesInBackground) void notices;
    else await notices;
    return stored;
  }

  /**
   * The answer recorded in the ledger, durably, before its delivery: the pending delivery, or
   * null when the ledger could not take it (logged).
   */
  private async recordAnswer(
    job: Job,
    startedAt: Date,
    running: RunRecord,
    targets: DeliveryTarget[],
    text: string,
    answeredBy: string | null,
  ): Promise<PendingJobDelivery | null> {
    const record = answerRecordOf(running, job, text, answeredBy, this.clock.now());
    try {
      await this.ledger.save(record);
    } catch (error) {
      this.log.warn(`could not record the answer of job '${job.name}' before its delivery; delivering it now, in its run slot`, {
        job: job.id,
        error: errorText(error),
      });
      return null;
    }
    const toSend = targets.filter((target) => target.kind === 'platform' || target.kind === 'bot-chat');
    return { job, startedAt, executionId: executionIdOf(job, startedAt), targets, toSend, text, record };
  }

  /**
   * Sends a pending answer to one of its targets (in that target's lane), and says how it went;
   * never throws.
   */
  deliverPendingTo(pending: PendingJobDelivery, target: DeliveryTarget): Promise<RunDelivery[]> {
    return this.sendAnswer(pending.job, pending.executionId, [target], pending.text);
  }

  /**
   * Keeps how a pending answer went to the targets tried so far (still `delivery_pending`), so
   * that a restart sends it only to the others. Logged when the ledger cannot take it.
   */
  async recordPendingProgress(pending: PendingJobDelivery, sent: RunDelivery[]): Promise<void> {
    await this.recorder.save({ ...pending.record, deliveries: mergeDeliveries(pending.record.deliveries, sent) });
  }

  /**
   * The end of a pending delivery, once every target answered: the run report is written, the
   * job's `last_status` and detail fields say how it went (unless a later run of the job was
   * marked already), the recovery or pause notice is sent (in the background), and the ledger's
   * record is finished, without the claim. The report and the job as stored afterwards.
   */
  async finishPending(pending: PendingJobDelivery, sent: RunDelivery[]): Promise<{ report: JobRunReport; job: Job | null }> {
    const { job, startedAt, text, record } = pending;
    const answeredBy = record.model;
    const deliveries = mergeDeliveries(record.deliveries, sent);
    const written = await this.reports.write(job, startedAt, outcomeOfDeliveries(deliveries), { response: text, answeredBy });
    if (pending.targets.some((target) => target.kind === 'local') && !deliveries.some((delivery) => delivery.target === 'local')) {
      const saved = written.outputPath !== null;
      deliveries.push({
        target: 'local',
        outcome: saved ? 'delivered' : 'failed',
        message_ids: [],
        error: saved ? null : 'the output file could not be written',
      });
    }
    const outcome = outcomeOfDeliveries(deliveries);
    if (outcome.status === 'delivery_failed')
      this.log.warn(`delivery of job '${job.name}' failed`, { job: job.id, error: outcome.deliveryError });
    const stored = await this.markEnded(
      job,
      outcome,
      pending.targets,
      (current, result) => markRunOutcome(current, result, startedAt),
      true,
    );
    await this.recorder.save(deliveredRecordOf(record, outcome, deliveries, this.clock.now()));
    return { report: { ...written, outcome, deliveries, runId: record.id }, job: stored };
  }

  /**
   * A pending delivery left by a stopped process, claimed by this one (`record`, as claimed): its
   * answer goes to the job's targets it has not reached yet. A job removed meanwhile, or targets
   * that cannot be resolved now, end the run `delivery_failed` here; null then.
   */
  async resumePending(record: RunRecord): Promise<PendingJobDelivery | null> {
    const job = (await this.repository.load()).jobs.find((each) => each.id === record.subject) ?? null;
    const startedAt = new Date(record.started_at);
    const fail = async (why: string): Promise<null> => {
      this.log.warn(`the answer of run ${record.id} cannot be delivered: ${why}`, { job: record.subject, run: record.id });
      await this.recorder.save(undeliverableRecordOf(record, why, this.clock.now()));
      return null;
    };
    if (job === null) return fail('its job was removed before the answer was delivered');
    if (record.answer === null) return fail('the run record holds no answer');
    const resolved = await this.deliveryTargets(job);
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
   * The job's targets as a run delivers to them, and a sentence for each that cannot be
   * delivered to now (see JobPreflight.deliveryTargets).
   */
  deliveryTargets(job: Job): ReturnType<JobPreflight['deliveryTargets']> {
    return this.checks.deliveryTargets(job);
  }

  /**
   * Sends `text`, an answer of `job`, to each target the way every run does (see
   * JobAnswerDelivery.sendAnswer), and says how it went to each, in order; the output file is not
   * written here. Used by the run itself and by `agent cron redeliver`. Never throws.
   */
  sendAnswer(job: Job, executionId: string, targets: readonly DeliveryTarget[], text: string): Promise<RunDelivery[]> {
    return this.answers.sendAnswer(job, executionId, targets, text);
  }
}
