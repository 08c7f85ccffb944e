/** What the dashboard does with a run from its page (docs/dashboard.md, Runs), through the command line's use cases. */
import type { RunJobNowOutput } from '../../application/cron/RunJobNow.js';
import type { Job } from '../../domain/Job.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';

/** Who the ledger records as having asked, for every action of the dashboard. */
export const DASHBOARD_ACTOR = 'dashboard';

export interface RunActions {
  /** Runs job `job` again now, its record saying who asked and that it runs `rerunOf` again; resolves once it started. */
  retry(job: string, rerunOf: string): Promise<{ job: Job; finished: Promise<RunJobNowOutput> }>;
  /** Sends the recorded answer of cron run `run` of job `job` again (`agent cron redeliver --run`). */
  redeliverCron(job: string, run: string): Promise<{ run: RunRecord; outcome: RunOutcome }>;
  /** Sends the recorded answer of webhook run `run` again (`agent webhook redeliver`). */
  redeliverWebhook(run: string): Promise<{ run: RunRecord; deliveredTo: string }>;
}
