import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import type { RunRequest } from '../../domain/runs/RunRecord.js';
import { claimForManualRun } from '../../domain/jobLifecycle.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { ProcessIdentity } from '../ports/ProcessIdentity.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { JobExecution } from './JobExecution.js';
import type { JobRunReport } from './JobRunReports.js';

export interface RunJobNowOutput {
  job: Job;
  report: JobRunReport;
}

export interface RunJobNowInput {
  job: string;
  /** Run a one-shot before its time, which uses it up; without it such a run is refused. */
  force?: boolean;
  /** Who asks for the run (recorded as its `requested_by`), and the run it runs again (`rerun_of`); absent: not recorded. */
  requested?: RunRequest;
  /** Cancels the run: its trees are killed and it is recorded `interrupted:` (JobExecution.runClaimed). */
  signal?: AbortSignal;
}

/**
 * Runs a job now in the calling process. It counts as a run; a paused, running or
 * completed job is refused, and so is a one-shot not yet due unless forced. The job is claimed first so no tick runs it at the same time.
 */
@injectable()
export class RunJobNow {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.ProcessIdentity) private readonly identity: ProcessIdentity,
    @inject(JobExecution) private readonly execution: JobExecution,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
  ) {}

  async execute(input: RunJobNowInput): Promise<RunJobNowOutput> {
    return (await this.start(input)).finished;
  }

  /**
   * Claims the job for a run now (refusing as `execute` does) and starts the run; resolves once
   * the run has started, with the job as claimed and the run's end to wait for.
   */
  async start(input: RunJobNowInput): Promise<{ job: Job; finished: Promise<RunJobNowOutput> }> {
    const startedAt = this.clock.now();
    const claimed = await this.repository.update(input.job, (target) => {
      const running = claimForManualRun(target, this.identity.claimant(), startedAt, this.settings.timeZone, input.force);
      return { job: running, result: running };
    });
    const finished = this.execution
      .runClaimed(claimed, startedAt, { signal: input.signal, ...(input.requested ? { requested: input.requested } : {}) })
      .then(({ report, job }) => ({ job: job ?? claimed, report }));
    return { job: claimed, finished };
  }
}
