/** Finding a job among the stored ones by what someone called it: its id or its name. */
import { ERROR_CODES } from './errorCodes.js';
import { JobError } from './errors.js';
import type { Job } from './Job.js';
import type { UnreadableRecord } from './JobRecord.js';
import { sameName } from './jobNames.js';

/**
 * Finds a job by id or by case-insensitive name; an ambiguous name lists the matching ids. A
 * reference to a stored record that could not be read says what is wrong with that record.
 */
export function findJob(jobs: readonly Job[], reference: string, unreadable: readonly UnreadableRecord[] = []): Job {
  const wanted = reference.trim();
  const byId = jobs.find((job) => job.id === wanted);
  if (byId) return byId;
  const byName = jobs.filter((job) => sameName(job.name, wanted));
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) {
    throw new JobError(
      ERROR_CODES.JOB.AMBIGUOUS,
      `The name "${wanted}" matches ${byName.length} jobs (${byName.map((job) => job.id).join(', ')}); name one by its id.`,
    );
  }
  const damaged = unreadable.find((record) => record.id === wanted);
  if (damaged) {
    throw new JobError(
      ERROR_CODES.JOB.UNREADABLE,
      `The stored record of job ${wanted} cannot be read (${damaged.reason}), so it was left untouched; correct or remove it in the job store (jobs.json) by hand.`,
    );
  }
  throw new JobError(ERROR_CODES.JOB.NOT_FOUND, `No job has the id or name "${wanted}"; see "agent cron list".`);
}
