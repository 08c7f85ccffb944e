/**
 * What one cron run produced, for its caller to show, and the run's output file (its run report),
 * written as the run ends, named and dated in the job's time zone.
 */
import { inject, injectable } from 'inversify';
import { jobTimeZone, type Job } from '../../domain/Job.js';
import { AGENT_NOT_RUN_NO_AGENT, renderRunReport, runReportFileName } from '../../domain/RunReport.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import { errorText } from '../../domain/errors.js';
import type { RunDelivery } from '../../domain/runs/RunRecord.js';
import type { RunUsage } from '../../domain/runs/usage.js';
import type { RunSpend } from '../ports/AgentRunner.js';
import type { Logger } from '../ports/Logger.js';
import type { RunOutputStore } from '../ports/RunOutputStore.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';

/** What one run produced, for the caller to show; the job record gets `outcome`. */
export interface JobRunReport {
  outcome: RunOutcome;
  response: string | null;
  outputPath: string | null;
  answeredBy: string | null;
  /** How the answer went to each target, in order; empty when nothing was sent. */
  deliveries?: RunDelivery[];
  /** The run's id in the run ledger. */
  runId?: string;
  /** The id of the run's trace (docs/traces.md); null or absent without traces. */
  traceId?: string | null;
  /** What the agent spent (docs/runs.md); null or absent when nothing was counted. */
  usage?: RunUsage | null;
  /** What it cost in US dollars; null or absent when unpriced. */
  costUsd?: number | null;
  /**
   * The run failed for a reason that may pass (docs/runs.md, Retries): its job's retry policy may
   * run it again, and its failure notice waits for the last attempt (JobRunMarks).
   */
  retryable?: boolean;
}

/** `report` with what its run spent. */
export function withSpend<Report extends JobRunReport>(report: Report, spend: RunSpend | null | undefined): Report {
  return spend ? { ...report, usage: spend.usage, costUsd: spend.costUsd } : report;
}

/** Writes the output files of cron runs. */
@injectable()
export class JobRunReports {
  constructor(
    @inject(TOKENS.RunOutputStore) private readonly outputs: RunOutputStore,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /** Writes the run's output file; a failure to write it is logged, not fatal. */
  async write(
    job: Job,
    startedAt: Date,
    outcome: RunOutcome,
    details: { response?: string; error?: string; answeredBy?: string | null },
  ): Promise<JobRunReport> {
    // The report is named and dated in the job's zone (docs/cron.md).
    const timeZone = jobTimeZone(job, this.settings.timeZone);
    const content = renderRunReport({
      job,
      startedAt,
      timeZone,
      status: outcome.status,
      response: details.response ?? null,
      error: details.error ?? (outcome.status === 'error' || outcome.status === 'blocked_config' ? outcome.error : null),
      answeredBy: details.answeredBy ?? null,
      queuedReceipts:
        outcome.status === 'delivery_queued' ? outcome.receipts : outcome.status === 'delivery_failed' ? (outcome.queued ?? []) : [],
      deliveryError: outcome.status === 'delivery_failed' ? outcome.deliveryError : null,
      agent: job.no_agent ? AGENT_NOT_RUN_NO_AGENT : null,
    });
    let outputPath: string | null = null;
    try {
      outputPath = await this.outputs.save(job.id, runReportFileName(startedAt, timeZone), content, this.settings.outputRetention);
    } catch (error) {
      this.log.warn(`could not write the output file of job '${job.name}'`, { job: job.id, error: errorText(error) });
    }
    return { outcome, response: details.response ?? null, outputPath, answeredBy: details.answeredBy ?? null };
  }
}
