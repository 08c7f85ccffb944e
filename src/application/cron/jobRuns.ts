import { jobTimeZone, type Job } from '../../domain/Job.js';
import { parseRunReport, runReportHeadline } from '../../domain/RunReport.js';
import type { RunDelivery, RunRecord } from '../../domain/runs/RunRecord.js';
import type { RunUsage } from '../../domain/runs/usage.js';
import type { RunLedger } from '../ports/RunLedger.js';
import type { RunOutputStore } from '../ports/RunOutputStore.js';

/** One past (or current) run of a job, as the run ledger and its report tell it. */
export interface JobRun {
  /** The run's id in the run ledger; null for a run only its report tells of. */
  id: string | null;
  /** When it started; null when the report does not say. */
  startedAt: Date | null;
  /** When it ended; null while it runs, and for a run only its report tells of. */
  finishedAt: Date | null;
  /** `running`, `ok`, `error`, `blocked_config` …; null for a report without a status line. */
  status: string | null;
  /** The first line of the error, else of the answer, that has any text. */
  headline: string | null;
  response: string | null;
  error: string | null;
  /** The slot the run was for; null for a run asked for by hand or only its report tells of. */
  slot: Date | null;
  /** The model that answered; null when none did or it is not known. */
  model: string | null;
  /** How the answer went to each target; empty when nothing was sent or it is not known. */
  deliveries: RunDelivery[];
  /** Where the report is (a file path); null while the run goes on, or when its report is gone. */
  location: string | null;
  /** When its answer was last delivered again (`agent cron redeliver`); null when it never was. */
  redeliveredAt?: Date | null;
  /** What the agent spent (docs/runs.md); null or absent when nothing was counted. */
  usage?: RunUsage | null;
  /** What it cost in US dollars; null or absent when unpriced or not known. */
  costUsd?: number | null;
  /** Which attempt of its slot it was (docs/runs.md, Retries); absent for the first. */
  attempt?: number;
  /** A retry's first attempt's run id; absent for a first attempt. */
  retryOf?: string;
  /** The id of the run's trace (docs/traces.md); absent without traces. */
  traceId?: string;
}

/**
 * The job's newest `limit` runs, newest first (shared by ShowJob and ListJobRuns): the run
 * ledger's records, each with the location of its report, and the runs that only a report
 * tells of (those of a home from before the ledger). Reports that vanish while being read (a
 * run pruning old ones) are skipped. A report's name is read in the job's zone, else in `configuredZone`.
 */
export async function recentRuns(
  outputs: RunOutputStore,
  ledger: RunLedger,
  job: Job,
  configuredZone: string,
  limit: number,
): Promise<JobRun[]> {
  const timeZone = jobTimeZone(job, configuredZone);
  const [names, ledgered] = await Promise.all([outputs.list(job.id), ledger.list({ kind: 'cron', subject: job.id, limit })]);
  const reports = await Promise.all(names.slice(0, limit + ledgered.length).map((name) => outputs.read(job.id, name)));
  const reported = reports
    .filter((report) => report !== null)
    .map((report): JobRun => {
      const parsed = parseRunReport(report.fileName, report.content, timeZone, job.prompt);
      return {
        ...parsed,
        id: null,
        finishedAt: null,
        slot: null,
        model: null,
        deliveries: [],
        headline: runReportHeadline(parsed),
        location: report.location,
      };
    });
  // A report and the ledger's record of one run share its start, to the second.
  const second = (date: Date | null) => (date === null ? null : Math.floor(date.getTime() / 1000));
  const reportOf = new Map(reported.map((run) => [second(run.startedAt), run]));
  const runs = ledgered.map((run) => {
    const fromLedger = ledgerRun(run);
    const report = reportOf.get(second(fromLedger.startedAt));
    if (report) reportOf.delete(second(fromLedger.startedAt));
    return { ...fromLedger, location: report?.location ?? null };
  });
  runs.push(...reportOf.values());
  // By run time, not by name: a report's name is in the zone of its day, which may have changed since.
  return runs.sort((a, b) => (b.startedAt?.getTime() ?? 0) - (a.startedAt?.getTime() ?? 0)).slice(0, Math.max(0, limit));
}

function ledgerRun(run: RunRecord): JobRun {
  const firstLine = (text: string | null) =>
    text
      ?.split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? null;
  return {
    id: run.id,
    startedAt: new Date(run.started_at),
    finishedAt: run.finished_at === null ? null : new Date(run.finished_at),
    status: run.status,
    headline: firstLine(run.error) ?? firstLine(run.answer),
    response: run.answer,
    error: run.error,
    slot: run.slot === null ? null : new Date(run.slot),
    model: run.model,
    deliveries: run.deliveries,
    location: null,
    redeliveredAt: run.redelivered_at ? new Date(run.redelivered_at) : null,
    usage: run.usage ?? null,
    costUsd: run.cost_usd ?? null,
    ...(run.attempt !== undefined ? { attempt: run.attempt } : {}),
    ...(run.retry_of !== undefined ? { retryOf: run.retry_of } : {}),
    ...(run.trace_id ? { traceId: run.trace_id } : {}),
  };
}
