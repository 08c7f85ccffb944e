/**
 * The run ledger's records of a cron run: each record the run path writes, built from the job and
 * the run's report. The run pipeline's RunRecorder writes them.
 */
import type { Job } from '../../domain/Job.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import { cronRunId, type RunDelivery, type RunRecord, type RunRequest } from '../../domain/runs/RunRecord.js';
import type { RunSpend } from '../ports/AgentRunner.js';
import { runError } from '../runs/runErrors.js';
import type { JobRunReport } from './JobRunReports.js';

/** The record of a run of `job` as it starts: `running`, with the prompt, claimed by the job's claimant (and who asked for it). */
export function runningRecordOf(job: Job, startedAt: Date, slot: Date | null | undefined, requested?: RunRequest): RunRecord {
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
    // A retry: which attempt, and the first attempt's run (docs/runs.md, Retries).
    ...(job.claim?.retry ? { attempt: job.claim.retry.attempt, retry_of: job.claim.retry.retry_of } : {}),
    ...(requested ? { requested_by: requested.by, ...(requested.rerun_of ? { rerun_of: requested.rerun_of } : {}) } : {}),
  };
}

/** The record of a run whose answer waits for its delivery: `delivery_pending`, claimed by the job's claimant. */
export function answerRecordOf(
  running: RunRecord,
  job: Job,
  text: string,
  answeredBy: string | null,
  now: Date,
  spend?: RunSpend | null,
): RunRecord {
  return {
    ...running,
    model: answeredBy,
    answer: text,
    usage: spend?.usage ?? null,
    cost_usd: spend?.costUsd ?? null,
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
    usage: report.usage ?? null,
    cost_usd: report.costUsd ?? null,
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
