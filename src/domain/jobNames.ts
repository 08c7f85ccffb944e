import { ERROR_CODES } from './errorCodes.js';
import { InvalidJobError } from './errors.js';
import type { Job } from './Job.js';

/**
 * Two jobs never share a name, ignoring case, so that a name always picks one job on the command
 * line. A name someone chose is refused when taken; a default name (the start of the prompt)
 * gets the first free " (2)", " (3)" … instead.
 */

/** What the name rules look at of a job. */
export type NamedJob = Pick<Job, 'id' | 'name'>;

/** The key two names are compared by. */
export function nameKey(name: string): string {
  return name.toLowerCase();
}

/** Whether two names are the same name. */
export function sameName(a: string, b: string): boolean {
  return nameKey(a) === nameKey(b);
}

/** Refuses `name` when a job other than `ownId` has it already. */
export function assertNameFree(jobs: readonly NamedJob[], name: string, ownId: string | null): void {
  const holder = jobs.find((job) => job.id !== ownId && sameName(job.name, name));
  if (holder) {
    throw new InvalidJobError(
      ERROR_CODES.JOB.NAME_TAKEN,
      `The name "${name}" is already used by job ${holder.id} ('${holder.name}'); choose another name, or edit or remove that job.`,
    );
  }
}

/** `base` when no job has it, else the first of "base (2)", "base (3)" … that none has. */
export function freeDefaultName(jobs: readonly NamedJob[], base: string): string {
  const taken = new Set(jobs.map((job) => nameKey(job.name)));
  if (!taken.has(nameKey(base))) return base;
  for (let number = 2; ; number += 1) {
    const candidate = `${base} (${number})`;
    if (!taken.has(nameKey(candidate))) return candidate;
  }
}

/** A new job as it joins `jobs`: its chosen name checked, or its default name made unique. */
export function withUniqueName(jobs: readonly NamedJob[], job: Job, nameWasChosen: boolean): Job {
  if (nameWasChosen) {
    assertNameFree(jobs, job.name, job.id);
    return job;
  }
  const name = freeDefaultName(jobs, job.name);
  return name === job.name ? job : { ...job, name };
}
