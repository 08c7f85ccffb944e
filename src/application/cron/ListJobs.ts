import { inject, injectable } from 'inversify';
import type { JobRepository, JobSnapshot } from '../ports/JobRepository.js';
import { TOKENS } from '../ports/tokens.js';

/** Every job, in creation order, plus the stored records that could not be read. */
@injectable()
export class ListJobs {
  constructor(@inject(TOKENS.JobRepository) private readonly repository: JobRepository) {}

  execute(): Promise<JobSnapshot> {
    return this.repository.load();
  }
}
