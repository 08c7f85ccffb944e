/**
 * A cron run's answer and notices, on the run pipeline's AnswerDelivery: a silent answer only
 * written to the output file; the answer to each of the job's targets (or handed on, for the
 * gateway to send in each platform's lane) with `cron.wrap_response`, and the output file's own
 * entry; the failure, recovery and pause notices to the job's platforms.
 */
import { inject, injectable, optional } from 'inversify';
import { executionIdOf } from '../../domain/botChat.js';
import type { DeliveryTarget } from '../../domain/DeliveryTarget.js';
import type { Job } from '../../domain/Job.js';
import { alertsFailure, isFailedRun } from '../../domain/jobLifecycle.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import { failureNotice, isSilentResponse, pausedAfterFailuresNotice, recoveryNotice, wrapResponse } from '../../domain/response.js';
import type { RunDelivery } from '../../domain/runs/RunRecord.js';
import { outcomeOfDeliveries } from '../../domain/runs/redelivery.js';
import type { RunSpend } from '../ports/AgentRunner.js';
import type { Logger } from '../ports/Logger.js';
import { NO_TRACING, type RunTracing } from '../ports/RunTracing.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { AnswerDelivery } from '../runs/AnswerDelivery.js';
import type { RunOwner } from '../runs/RunContexts.js';
import { JobRunReports, type JobRunReport } from './JobRunReports.js';

/** How log lines and notices name a job. */
export function ownerOf(job: Pick<Job, 'id' | 'name'>): RunOwner {
  return { label: `job '${job.name}'`, about: { job: job.id } };
}

/** An answer the run path hands on instead of sending it (the gateway's runs). */
export interface AnswerToDeliver {
  answered: { targets: DeliveryTarget[]; text: string; answeredBy: string | null; spend?: RunSpend | null };
}

/** Delivers cron runs' answers and notices. */
@injectable()
export class JobAnswers {
  constructor(
    @inject(AnswerDelivery) private readonly answers: AnswerDelivery,
    @inject(JobRunReports) readonly reports: JobRunReports,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    /** The output file of a job that delivers `local` is a delivery span like the others (docs/traces.md). */
    @inject(TOKENS.RunTracing) @optional() private readonly tracing: RunTracing = NO_TRACING,
  ) {}

  /**
   * A run's answer, delivered to its targets and its output file written; a silent answer is only
   * written. With `deliverLater`, an answer that goes to a chat platform or bot-chat is handed on
   * instead.
   */
  async deliverAnswer(
    job: Job,
    startedAt: Date,
    targets: DeliveryTarget[],
    text: string,
    answeredBy: string | null,
    deliverLater: boolean,
  ): Promise<JobRunReport | AnswerToDeliver> {
    if (!isSilentResponse(text) && deliverLater && targets.some((target) => target.kind === 'platform' || target.kind === 'bot-chat')) {
      return { answered: { targets, text, answeredBy } };
    }
    return this.deliverNow(job, startedAt, targets, text, answeredBy);
  }

  /** A run's answer delivered to its targets now, in the run's slot, and its output file written; a silent answer is only written. */
  async deliverNow(job: Job, startedAt: Date, targets: DeliveryTarget[], text: string, answeredBy: string | null): Promise<JobRunReport> {
    if (isSilentResponse(text)) return this.reports.write(job, startedAt, { status: 'ok' }, { response: text, answeredBy });
    const deliveries = await this.sendAnswer(job, executionIdOf(job, startedAt), targets, text);
    return this.finish(job, startedAt, targets, deliveries, text, answeredBy);
  }

  /**
   * The end of an answer's delivery: the output file written, its own entry among the deliveries
   * when the job delivers `local`, and the outcome over them all (a failure logged).
   */
  async finish(
    job: Job,
    startedAt: Date,
    targets: readonly DeliveryTarget[],
    sent: RunDelivery[],
    text: string,
    answeredBy: string | null,
  ): Promise<JobRunReport & { deliveries: RunDelivery[] }> {
    const deliveries = [...sent];
    const write = () => this.reports.write(job, startedAt, outcomeOfDeliveries(deliveries), { response: text, answeredBy });
    const local = targets.some((target) => target.kind === 'local') && !deliveries.some((delivery) => delivery.target === 'local');
    const written = local
      ? await this.tracing.step({ kind: 'delivery', target: 'local', platform: null }, async (span) => {
          const report = await write();
          const saved = report.outputPath !== null;
          span.note({
            outcome: saved ? 'delivered' : 'failed',
            messageIds: [],
            error: saved ? null : 'the output file could not be written',
          });
          return report;
        })
      : await write();
    if (local) {
      const saved = written.outputPath !== null;
      deliveries.push({
        target: 'local',
        outcome: saved ? 'delivered' : 'failed',
        message_ids: [],
        error: saved ? null : 'the output file could not be written',
      });
    }
    const outcome = outcomeOfDeliveries(deliveries);
    if (outcome.status === 'delivery_failed') {
      this.log.warn(`delivery of job '${job.name}' failed`, { job: job.id, error: outcome.deliveryError });
    }
    return { ...written, outcome, deliveries };
  }

  /**
   * Sends `text`, an answer of `job`, to each target the way every run does
   * (`cron.wrap_response`, a bot-chat target through its mailbox under `executionId`, each
   * platform's splitting and retries), and says how it went to each, in order. `local` and
   * anything else that is only the output file get no entry: the output file is not written
   * here. Used by the run itself and by `agent cron redeliver`. Never throws.
   */
  async sendAnswer(job: Job, executionId: string, targets: readonly DeliveryTarget[], text: string): Promise<RunDelivery[]> {
    const platformText = this.settings.wrapResponse ? wrapResponse(job, text) : text;
    const sent = await this.answers.send(targets, text, { kind: 'cron', job, executionId, platformText });
    return sent.map(({ target, outcome, message_ids, error }) => ({ target, outcome, message_ids, error }));
  }

  /**
   * The failure notice of a failed run, to the job's platforms: on the first failure of a streak
   * only, on every one, or never (`cron.failure_alerts`; `job` is the job as claimed, with the
   * streak before this run).
   */
  async notifyFailure(job: Job, targets: DeliveryTarget[], reason: string): Promise<void> {
    if (!alertsFailure(job, this.settings.failureAlerts ?? 'first')) return;
    await this.answers.notify(targets, failureNotice(job.name, reason), 'failure notice', ownerOf(job));
  }

  /** The notice of a run a daily cap kept from starting: only for the first such run of the last 24 h, unless alerts are off. */
  async notifyDailyBudget(job: Job, targets: DeliveryTarget[], reason: string, firstToday: boolean): Promise<void> {
    if (!firstToday || (this.settings.failureAlerts ?? 'first') === 'off') return;
    await this.answers.notify(targets, failureNotice(job.name, reason), 'daily budget notice', ownerOf(job));
  }

  /** After a run: the one notice that a streak of failures ended, or that the job was paused for it. */
  async noticesAfter(job: Job, outcome: RunOutcome, targets: DeliveryTarget[], pausedBecause: string | null): Promise<void> {
    if (pausedBecause !== null) {
      this.log.warn(`job '${job.name}' ${pausedBecause}`, { job: job.id });
      await this.answers.notify(targets, pausedAfterFailuresNotice(job.name, pausedBecause), 'pause notice', ownerOf(job));
    } else if (!isFailedRun(outcome) && job.failure_streak > 0 && (this.settings.failureAlerts ?? 'first') !== 'off') {
      await this.answers.notify(targets, recoveryNotice(job.name, job.failure_streak), 'recovery notice', ownerOf(job));
    }
  }
}
