import type { Job } from '../../domain/Job.js';
import type { CreateJobInput } from '../cron/CreateJob.js';
import type { EditJobInput } from '../cron/EditJob.js';
import type { RunJobNowOutput } from '../cron/RunJobNow.js';
import type { JobSnapshot } from './JobRepository.js';

/**
 * What a session's job tool may do with jobs: the same operations, with the same checks and
 * the same one-sentence refusals (AppError), as `agent cron`. Each method throws what the use
 * case it stands for throws.
 *
 * The job tool reaches jobs only through this port. It is bound for chat sessions and webhook
 * runs; job runs never hold the job tool, so a job run's agent never reaches it.
 */
export interface JobControl {
  create(input: CreateJobInput): Promise<Job>;
  /** Every job in creation order, with the stored records that could not be read. */
  list(): Promise<JobSnapshot>;
  update(input: EditJobInput): Promise<Job>;
  pause(job: string): Promise<Job>;
  resume(job: string): Promise<Job>;
  /** Runs the job now, to its end, and returns its report. */
  run(job: string): Promise<RunJobNowOutput>;
  remove(job: string): Promise<Job>;
}
