import { inject, injectable } from 'inversify';
import { findJob, type Job } from '../../domain/Job.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { RunOutputStore } from '../ports/RunOutputStore.js';
import { TOKENS } from '../ports/tokens.js';

/** Deletes a job and its output files. */
@injectable()
export class RemoveJob {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.RunOutputStore) private readonly outputs: RunOutputStore,
  ) {}

  async execute(input: { job: string }): Promise<Job> {
    const removed = await this.repository.modify((jobs, unreadable) => {
      const target = findJob(jobs, input.job, unreadable);
      return { jobs: jobs.filter((job) => job.id !== target.id), result: target };
    });
    await this.outputs.removeAll(removed.id);
    return removed;
  }
}
