/**
 * The run ledger's records of a cron run: each record the run path writes, built from the job and
 * the run's report, and their writing, where a record the ledger cannot take is logged and the
 * run goes on. A run still going after RUNNING_RECORD_AFTER_MS shows as running until it ends.
 */
import type { Job } from '../../domain/Job.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import { errorText } from '../../domain/errors.js';
import { cronRunId, RUNNING_RECORD_AFTER_MS, type RunDelivery, type RunRecord } from '../../domain/runs/RunRecord.js';
import type { Logger } from '../ports/Logger.js';
import type { RunLedger } from '../ports/RunLedger.js';
import type { Timer } from '../ports/Timer.js';
import { runError } from './jobRunErrors.js';
import type { JobRunReport } from './JobRunReports.js';

/** The record of a run of `job` as it starts: `running`, with the prompt, claimed by the job's claimant. */
export function runningRecordOf(job: Job, startedAt: Date, slot: Date | null | undefined): RunRecord {
  return {
    id: cronRunId(job.id, startedAt),
    kind: 'cron',
    subject: job.id,
    name: job.name,
    slot: slot ? slot.toISOString() : null,
    event: null,
    delivery_id: null,
    started_at: startedAt.toISOString(),
    finished_at: null,
    status: 'running',
    model: null,
    // A job that runs only its script asks no agent anything.
    prompt: job.no_agent ? null : job.prompt,
    answer: null,
    error: null,
    deliveries: [],
    // Who runs it: once that process is gone, the ledger records the run interrupted (AbandonedRuns).
    claimant: job.claim?.by ?? null,
  };
}

/** The record of a run whose answer waits for its delivery: `delivery_pending`, claimed by the job's claimant. */
export function answerRecordOf(running: RunRecord, job: Job, text: string, answeredBy: string | null, now: Date): RunRecord {
  return {
    ...running,
    model: answeredBy,
    answer: text,
    delivery_pending: true,
    redelivery_claim: { by: job.claim?.by ?? 'unknown', at: now.toISOString() },
  };
}

/** The last record of a run that ended in its slot, from its report. */
export function finishedRecordOf(running: RunRecord, report: JobRunReport, now: Date): RunRecord {
  return {
    ...running,
    finished_at: now.toISOString(),
    status: report.outcome.status,
    model: report.answeredBy,
    answer: report.response,
    error: runError(report.outcome),
    deliveries: report.deliveries ?? [],
  };
}

/** The last record of a pending delivery once every target answered, without the claim. */
export function deliveredRecordOf(record: RunRecord, outcome: RunOutcome, deliveries: RunDelivery[], now: Date): RunRecord {
  return {
    ...record,
    finished_at: now.toISOString(),
    status: outcome.status,
    error: runError(outcome),
    deliveries,
    delivery_pending: false,
    redelivery_claim: null,
  };
}

/** The last record of a pending delivery that cannot be made (`why`), without the claim. */
export function undeliverableRecordOf(record: RunRecord, why: string, now: Date): RunRecord {
  return {
    ...record,
    finished_at: now.toISOString(),
    status: 'delivery_failed',
    error: why,
    delivery_pending: false,
    redelivery_claim: null,
  };
}

/**
 * The record of a slot skipped by the catch-up policy `skip`: nothing ran, so it is `skipped`,
 * with the slot, no prompt, no model and `reason` as its error.
 */
export function skippedRecordOf(job: Job, slot: Date, foundAt: Date, reason: string): RunRecord {
  return {
    id: cronRunId(job.id, foundAt),
    kind: 'cron',
    subject: job.id,
    name: job.name,
    slot: slot.toISOString(),
    event: null,
    delivery_id: null,
    started_at: foundAt.toISOString(),
    finished_at: foundAt.toISOString(),
    status: 'skipped',
    model: null,
    prompt: null,
    answer: null,
    error: reason,
    deliveries: [],
  };
}

/** A run's `running` record while it may still be written: see {@link JobRunRecorder.showRunning}. */
export interface ShownRunning {
  /** Without a timer, the record being written at once, for the run to wait for; null otherwise. */
  writtenNow: Promise<void> | null;
  /** The run ended: the record is no longer written, and one under way is waited for, so that it comes before the last. */
  stop(): Promise<void>;
}

/** Writes a cron run's records to the run ledger. */
export class JobRunRecorder {
  constructor(
    private readonly ledger: RunLedger,
    private readonly log: Logger,
    /** Without it (tests that build the run path by hand), a run is in the ledger as running from its start. */
    private readonly timer: Timer | null,
  ) {}

  /**
   * A run that ends at once is written to the ledger once, when it ends; one still going after
   * RUNNING_RECORD_AFTER_MS shows as running until then (as a webhook run does).
   */
  showRunning(running: RunRecord): ShownRunning {
    const ended = new AbortController();
    const shownRunning = this.timer
      ? this.timer
          .wait(RUNNING_RECORD_AFTER_MS, ended.signal, { background: true })
          .then(() => (ended.signal.aborted ? undefined : this.save(running)))
      : this.save(running);
    return {
      writtenNow: this.timer ? null : shownRunning,
      stop: async () => {
        ended.abort();
        await shownRunning;
      },
    };
  }

  /** The ledger shows runs; one it cannot take is logged, and the run goes on. */
  async save(run: RunRecord): Promise<void> {
    try {
      await this.ledger.save(run);
    } catch (error) {
      this.log.warn(`could not write run ${run.id} to the run ledger`, { job: run.subject, error: errorText(error) });
    }
  }
}
