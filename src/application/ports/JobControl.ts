import type { Job } from '../../domain/Job.js';
import type { CreateJobInput } from '../cron/CreateJob.js';
import type { EditJobInput } from '../cron/EditJob.js';
import type { RedeliverJobRunOutput } from '../cron/RedeliverJobRun.js';
import type { RunJobNowOutput } from '../cron/RunJobNow.js';
import type { JobSnapshot } from './JobRepository.js';

/** A job as a create or an update left it, and what would keep it from doing what it says. */
export interface JobChange {
  job: Job;
  /** One sentence each: a target's platform not configured, an unknown named channel, a missing skill. */
  warnings: string[];
}

/**
 * What a session's job tool may do with jobs: the same operations, with the same checks and
 * the same one-sentence refusals (AppError), as `agent cron`. Each method throws what the use
 * case it stands for throws.
 *
 * The job tool reaches jobs only through this port. It is bound for chat sessions and webhook
 * runs; job runs never hold the job tool, so a job run's agent never reaches it.
 */
export interface JobControl {
  create(input: CreateJobInput): Promise<JobChange>;
  /** Every job in creation order, with the stored records that could not be read. */
  list(): Promise<JobSnapshot>;
  update(input: EditJobInput): Promise<JobChange>;
  /** Pauses the job; `reason`, when given, is stored with it and shown until it is resumed. */
  pause(job: string, reason?: string | null): Promise<Job>;
  resume(job: string): Promise<Job>;
  /** Runs the job now, to its end, and returns its report. */
  run(job: string): Promise<RunJobNowOutput>;
  /** Delivers the recorded answer of the job's run `run` (default: its latest with an answer) again, without running it. */
  redeliver(job: string, run?: string | null): Promise<RedeliverJobRunOutput>;
  remove(job: string): Promise<Job>;
}
