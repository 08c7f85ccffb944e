/**
 * The `--after` links of a job being created or edited (docs/cron.md, Chains): each reference
 * resolved to a job id, and the chain they make checked for cycles and length against the jobs
 * as stored.
 */
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { InvalidJobError } from '../../domain/errors.js';
import type { Job } from '../../domain/Job.js';
import {
  AFTER_ONLY_SCHEDULE,
  CHAIN_CONDITIONS,
  checkChainLinks,
  isAfterOnlyText,
  parseChainLink,
  type ChainCondition,
  type ChainLink,
} from '../../domain/jobChains.js';
import { findJob } from '../../domain/jobLookup.js';
import type { Schedule } from '../../domain/Schedule.js';
import type { JobRepository } from '../ports/JobRepository.js';

/** A link as given: `job`, `job:ok|failed|any`, or `{job, on}` (the job tool's objects). */
export type ChainLinkInput = string | { job: string; on?: string | null };

/** The links `inputs` name, their jobs resolved to ids (one naming none is refused), without repeats. */
export async function chainLinksOf(repository: JobRepository, inputs: readonly ChainLinkInput[]): Promise<ChainLink[]> {
  if (inputs.length === 0) return [];
  const { jobs, unreadable } = await repository.load();
  const links = new Map<string, ChainLink>();
  for (const input of inputs) {
    const { reference, on } = typeof input === 'string' ? parseChainLink(input) : objectLink(input);
    const id = findJob(jobs, reference, unreadable).id;
    links.set(id, { job: id, on });
  }
  return [...links.values()];
}

function objectLink(input: { job: string; on?: string | null }): { reference: string; on: ChainCondition } {
  const on = input.on?.trim().toLowerCase() || 'ok';
  if (!(CHAIN_CONDITIONS as readonly string[]).includes(on)) {
    throw new InvalidJobError(ERROR_CODES.JOB.INVALID_AFTER, `"${input.on}" is not a condition to run after a job; use ok, failed or any.`);
  }
  return { reference: parseChainLink(input.job).reference, on: on as ChainCondition };
}

/** The schedule a job is created with: "only after other jobs" when none (or `after`) is written and it has links. */
export function scheduleWithLinks(
  written: string | null | undefined,
  links: readonly ChainLink[],
  parse: (text: string) => Schedule,
): Schedule {
  if (!isAfterOnlyText(written)) return parse(written!);
  if (links.length === 0) throw noLinks(written);
  return AFTER_ONLY_SCHEDULE;
}

function noLinks(written: string | null | undefined): InvalidJobError {
  return new InvalidJobError(
    ERROR_CODES.JOB.INVALID_AFTER,
    written?.trim()
      ? 'A job that runs only after other jobs (schedule "after") needs at least one --after <job>.'
      : 'The job has no schedule; give one, or --after <job> to run it after another job.',
  );
}

/** Refuses a job left running only after other jobs without any to run after, and links that make a cycle or too long a chain. */
export function checkJobLinks(jobs: readonly Job[], job: Job): Job {
  const links = job.after ?? [];
  if (job.schedule.kind === 'after' && links.length === 0) {
    throw new InvalidJobError(
      ERROR_CODES.JOB.INVALID_AFTER,
      `Job '${job.name}' runs only after other jobs; give it a schedule (--schedule) or at least one --after <job>.`,
    );
  }
  if (links.length > 0) checkChainLinks(jobs, job, links);
  return job;
}
