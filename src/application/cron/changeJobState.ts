import { findJob, type Job } from '../../domain/Job.js';
import type { JobRepository } from '../ports/JobRepository.js';

/** Finds a job by id or name inside the store's lock and replaces it with `change(job)`. */
export function changeJob(
  repository: JobRepository,
  reference: string,
  change: (job: Job) => Job,
): Promise<Job> {
  return repository.modify((jobs, unreadable) => {
    const target = findJob(jobs, reference, unreadable);
    const changed = change(target);
    if (changed === target) return { jobs, result: target };
    return { jobs: jobs.map((job) => (job.id === target.id ? changed : job)), result: changed };
  });
}
