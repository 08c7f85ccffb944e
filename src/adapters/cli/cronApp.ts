/** What the cron commands act through: the settings, the paths and the cron use cases. */
import type { CancelJobRun } from '../../application/cron/CancelJobRun.js';
import type { CreateJob } from '../../application/cron/CreateJob.js';
import type { EditJob } from '../../application/cron/EditJob.js';
import type { JobWarnings } from '../../application/cron/JobWarnings.js';
import type { ListJobRuns } from '../../application/cron/ListJobRuns.js';
import type { ListJobs } from '../../application/cron/ListJobs.js';
import type { PauseJob } from '../../application/cron/PauseJob.js';
import type { RedeliverJobRun } from '../../application/cron/RedeliverJobRun.js';
import type { RemoveJob } from '../../application/cron/RemoveJob.js';
import type { ResumeJob } from '../../application/cron/ResumeJob.js';
import type { RunDueJobs } from '../../application/cron/RunDueJobs.js';
import type { RunJobNow } from '../../application/cron/RunJobNow.js';
import type { ShowJob } from '../../application/cron/ShowJob.js';
import type { AgentPaths, CronSettings } from '../../application/ports/Settings.js';
import type { StartCliFiring } from './cliFiring.js';

/** What the cron commands need, built on first use by the composition root. */
export interface CronApp {
  settings: CronSettings;
  paths: AgentPaths;
  createJob: CreateJob;
  editJob: EditJob;
  jobWarnings: JobWarnings;
  listJobs: ListJobs;
  pauseJob: PauseJob;
  resumeJob: ResumeJob;
  removeJob: RemoveJob;
  runJobNow: RunJobNow;
  runDueJobs: RunDueJobs;
  /** Starts firing due jobs the one way every process does (the implicit tick's look). */
  startFiring: StartCliFiring;
  showJob: ShowJob;
  listJobRuns: ListJobRuns;
  redeliverJobRun: RedeliverJobRun;
  cancelJobRun: CancelJobRun;
  /**
   * While this command runs jobs (`cron run`, `cron tick`), stops those another process asks to
   * cancel (`agent cron cancel`); returns the unwatch.
   */
  watchCancels(): () => void;
}
