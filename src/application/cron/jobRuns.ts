import type { Job } from '../../domain/Job.js';
import { parseRunReport, runReportHeadline } from '../../domain/RunReport.js';
import type { RunOutputStore } from '../ports/RunOutputStore.js';

/** One past run of a job, as its report tells it. */
export interface JobRun {
  /** When it started; null when the report does not say. */
  startedAt: Date | null;
  /** `ok`, `error`, `blocked_config` …; null for a report without a status line. */
  status: string | null;
  /** The first line of the error, else of the answer, that has any text. */
  headline: string | null;
  response: string | null;
  error: string | null;
  /** Where the report is (a file path). */
  location: string;
}

/**
 * The job's newest `limit` runs, newest first, read from its reports (shared by ShowJob and
 * ListJobRuns). Reports that vanish while being read (a run pruning old ones) are skipped.
 */
export async function recentRuns(outputs: RunOutputStore, job: Job, timeZone: string, limit: number): Promise<JobRun[]> {
  const names = await outputs.list(job.id);
  const reports = await Promise.all(names.map((name) => outputs.read(job.id, name)));
  const runs = reports
    .filter((report) => report !== null)
    .map((report): JobRun => {
      const parsed = parseRunReport(report.fileName, report.content, timeZone, job.prompt);
      return { ...parsed, headline: runReportHeadline(parsed), location: report.location };
    });
  // By run time, not by name: a report's name is in the zone of its day, which may have changed since.
  return runs.sort((a, b) => (b.startedAt?.getTime() ?? 0) - (a.startedAt?.getTime() ?? 0)).slice(0, Math.max(0, limit));
}
