/**
 * Where a cron run's answer and notices go: the answer to each of the job's targets (or handed on,
 * for the gateway to send in each platform's lane), how it went to each, and the failure,
 * recovery and pause notices to the job's platforms.
 */
import { describeTarget, type DeliveryTarget, type PlatformTarget } from '../../domain/DeliveryTarget.js';
import type { Job } from '../../domain/Job.js';
import { alertsFailure, isFailedRun } from '../../domain/jobLifecycle.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import { failureNotice, isSilentResponse, pausedAfterFailuresNotice, recoveryNotice, wrapResponse } from '../../domain/response.js';
import type { RunDelivery } from '../../domain/runs/RunRecord.js';
import { outcomeOfDeliveries } from '../../domain/runs/redelivery.js';
import { errorText } from '../../domain/errors.js';
import { escapeControlCharacters } from '../../domain/controlCharacters.js';
import { botChatMessage, executionIdOf } from '../../domain/botChat.js';
import type { BotChatDelivery } from '../ports/BotChatDelivery.js';
import type { DeliveryChannel } from '../ports/DeliveryChannel.js';
import type { Logger } from '../ports/Logger.js';
import type { CronSettings } from '../ports/Settings.js';
import type { JobRunReport, JobRunReports } from './JobRunReports.js';

/** The lane a target's delivery waits in: its platform's (the lane webhook answers use too), or bot-chat's. */
export function laneOfTarget(target: DeliveryTarget): string {
  return target.kind === 'platform' ? `platform:${target.platform}` : target.kind;
}

/** An answer the run path hands on instead of sending it (the gateway's runs). */
export interface AnswerToDeliver {
  answered: { targets: DeliveryTarget[]; text: string; answeredBy: string | null };
}

/** Delivers cron runs' answers and notices. */
export class JobAnswerDelivery {
  constructor(
    private readonly channel: DeliveryChannel,
    private readonly botChat: BotChatDelivery,
    private readonly settings: CronSettings,
    private readonly log: Logger,
    private readonly reports: JobRunReports,
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
    deliverLater: false,
  ): Promise<JobRunReport>;
  async deliverAnswer(
    job: Job,
    startedAt: Date,
    targets: DeliveryTarget[],
    text: string,
    answeredBy: string | null,
    deliverLater: boolean,
  ): Promise<JobRunReport | AnswerToDeliver>;
  async deliverAnswer(
    job: Job,
    startedAt: Date,
    targets: DeliveryTarget[],
    text: string,
    answeredBy: string | null,
    deliverLater: boolean,
  ): Promise<JobRunReport | AnswerToDeliver> {
    if (isSilentResponse(text)) {
      return this.reports.write(job, startedAt, { status: 'ok' }, { response: text, answeredBy });
    }
    if (deliverLater && targets.some((target) => target.kind === 'platform' || target.kind === 'bot-chat')) {
      return { answered: { targets, text, answeredBy } };
    }
    const deliveries = await this.sendAnswer(job, executionIdOf(job, startedAt), targets, text);
    const finished = await this.reports.write(job, startedAt, outcomeOfDeliveries(deliveries), { response: text, answeredBy });
    if (targets.some((target) => target.kind === 'local')) {
      const written = finished.outputPath !== null;
      deliveries.push({
        target: 'local',
        outcome: written ? 'delivered' : 'failed',
        message_ids: [],
        error: written ? null : 'the output file could not be written',
      });
    }
    const outcome = outcomeOfDeliveries(deliveries);
    if (outcome.status === 'delivery_failed') {
      this.log.warn(`delivery of job '${job.name}' failed`, { job: job.id, error: outcome.deliveryError });
    }
    return { ...finished, outcome, deliveries };
  }

  /**
   * Sends `text`, an answer of `job`, to each target the way every run does
   * (`cron.wrap_response`, a bot-chat target through its mailbox under `executionId`, each
   * platform's splitting and retries), and says how it went to each, in order. `local` and
   * anything else that is only the output file get no entry: the output file is not written
   * here. Used by the run itself and by `agent cron redeliver`. Never throws.
   */
  async sendAnswer(job: Job, executionId: string, targets: readonly DeliveryTarget[], text: string): Promise<RunDelivery[]> {
    const deliveries: RunDelivery[] = [];
    const message = this.settings.wrapResponse ? wrapResponse(job, text) : text;
    for (const target of targets) {
      try {
        if (target.kind === 'bot-chat') {
          const receipt = await this.botChat.deliver({
            profile: target.profile,
            jobId: job.id,
            jobName: job.name,
            executionId,
            message: botChatMessage(job.name, text),
          });
          deliveries.push({
            target: describeTarget(target),
            outcome: receipt.lane === 'queued' ? 'queued' : 'delivered',
            message_ids: [receipt.receipt],
            error: null,
          });
        } else {
          const messageIds = await this.deliverTo(target, message);
          if (messageIds !== null)
            deliveries.push({ target: describeTarget(target), outcome: 'delivered', message_ids: messageIds, error: null });
        }
      } catch (error) {
        // One line per target, and no control character a platform's answer may hold (a NUL, an
        // ESC) reaches last_delivery_error, the report or a terminal showing them.
        deliveries.push({
          target: describeTarget(target),
          outcome: 'failed',
          message_ids: [],
          error: escapeControlCharacters(errorText(error)),
        });
      }
    }
    return deliveries;
  }

  /** The platform's message ids; null for a target that is not sent anywhere but the output file. */
  private async deliverTo(target: DeliveryTarget, message: string): Promise<string[] | null> {
    switch (target.kind) {
      case 'local':
      case 'origin':
      case 'all':
        return null;
      case 'platform':
        return (await this.channel.deliver(target, message)).messageIds;
      case 'bot-chat':
        throw new Error('bot-chat is delivered by the bot-chat lane, not as a platform message');
    }
  }

  /**
   * The failure notice of a failed run, to the job's platforms: on the first failure of a streak
   * only, on every one, or never (`cron.failure_alerts`; `job` is the job as claimed, with the
   * streak before this run).
   */
  async notifyFailure(job: Job, targets: DeliveryTarget[], reason: string): Promise<void> {
    if (!alertsFailure(job, this.settings.failureAlerts ?? 'first')) return;
    await this.notify(job, targets, failureNotice(job.name, reason), 'failure notice');
  }

  /** After a run: the one notice that a streak of failures ended, or that the job was paused for it. */
  async noticesAfter(job: Job, outcome: RunOutcome, targets: DeliveryTarget[], pausedBecause: string | null): Promise<void> {
    if (pausedBecause !== null) {
      this.log.warn(`job '${job.name}' ${pausedBecause}`, { job: job.id });
      await this.notify(job, targets, pausedAfterFailuresNotice(job.name, pausedBecause), 'pause notice');
    } else if (!isFailedRun(outcome) && job.failure_streak > 0 && (this.settings.failureAlerts ?? 'first') !== 'off') {
      await this.notify(job, targets, recoveryNotice(job.name, job.failure_streak), 'recovery notice');
    }
  }

  /** Best effort: a notice that cannot be sent is only logged. */
  private async notify(job: Job, targets: DeliveryTarget[], text: string, what: string): Promise<void> {
    const platforms = targets.filter((target): target is PlatformTarget => target.kind === 'platform');
    for (const target of platforms) {
      try {
        await this.channel.deliver(target, text);
      } catch (error) {
        this.log.warn(`could not send the ${what} of job '${job.name}'`, { job: job.id, error: errorText(error) });
      }
    }
  }
}
