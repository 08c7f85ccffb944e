import type { Job } from '../../domain/Job.js';
import type { JobRepository } from '../ports/JobRepository.js';

/** Finds a job by id or name inside the store's lock and replaces it with `change(job)`. */
export function changeJob(repository: JobRepository, reference: string, change: (job: Job) => Job): Promise<Job> {
  return repository.update(reference, (target) => {
    const changed = change(target);
    return { job: changed, result: changed };
  });
}
