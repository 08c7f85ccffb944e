import { inject, injectable } from 'inversify';
import { jobTimeZone, type Job } from '../../domain/Job.js';
import { findJob } from '../../domain/jobLookup.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { RunOutputStore } from '../ports/RunOutputStore.js';
import type { RunLedger } from '../ports/RunLedger.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { recentRuns, type JobRun } from './jobRuns.js';

export interface ListJobRunsInput {
  /** Job id or name (case-insensitive). */
  job: string;
  /** How many runs at most, newest first. */
  limit: number;
}

export interface ListJobRunsOutput {
  job: Job;
  /** The zone the job's times are shown in: its own, else the configured one. */
  timeZone: string;
  runs: JobRun[];
}

/** `agent cron runs <job>`: the job's runs from the run ledger and its reports, newest first. Reads only. */
@injectable()
export class ListJobRuns {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.RunOutputStore) private readonly outputs: RunOutputStore,
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
  ) {}

  /** Throws JOB.NOT_FOUND (or JOB.AMBIGUOUS) when `job` names no single job. */
  async execute(input: ListJobRunsInput): Promise<ListJobRunsOutput> {
    const { jobs, unreadable } = await this.repository.load();
    const job = findJob(jobs, input.job, unreadable);
    const runs = await recentRuns(this.outputs, this.ledger, job, this.settings.timeZone, input.limit);
    return { job, timeZone: jobTimeZone(job, this.settings.timeZone), runs };
  }
}
