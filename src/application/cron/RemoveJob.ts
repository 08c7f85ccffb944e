import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
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
    const removed = await this.repository.remove(input.job);
    await this.outputs.removeAll(removed.id);
    return removed;
  }
}
