import { AppError } from '../../domain/errors.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { WebhookSubscriptionRepository } from '../ports/WebhookSubscriptionRepository.js';

export interface JobImport {
  /** Ids of the jobs copied. */
  imported: string[];
  /** Ids of the jobs the target held already: left as they are there. */
  present: string[];
  /** Jobs that could not be copied, one sentence each. */
  refused: string[];
}

/**
 * Copies every job of one store into another (the files of a home into a database), keeping ids,
 * names and state. A job whose id the target holds already is left as it is there, so copying
 * twice changes nothing; a job whose name another job of the target holds is refused.
 */
export async function importJobs(from: JobRepository, to: JobRepository): Promise<JobImport> {
  const { jobs, unreadable } = await from.load();
  const outcome: JobImport = { imported: [], present: [], refused: [] };
  for (const job of jobs) {
    if (await to.findById(job.id)) {
      outcome.present.push(job.id);
      continue;
    }
    try {
      await to.create(job, true);
      outcome.imported.push(job.id);
    } catch (error) {
      if (!(error instanceof AppError) || error.code.startsWith('DATABASE.') || error.code.startsWith('STORE.')) throw error;
      outcome.refused.push(`job '${job.name}' (${job.id}) was not imported: ${error.message}`);
    }
  }
  for (const record of unreadable) {
    outcome.refused.push(
      `record ${record.index + 1} of jobs.json${record.id ? ` (job ${record.id})` : ''} was not imported: ${record.reason}.`,
    );
  }
  return outcome;
}

export interface SubscriptionImport {
  /** Names of the subscriptions copied. */
  imported: string[];
  /** Names the target held already: left as they are there. */
  present: string[];
  /** Entries of the source that could not be read, one sentence each. */
  refused: string[];
}

/**
 * Copies every webhook subscription of one store into another, secrets included. A name the
 * target holds already is left as it is there, so copying twice changes nothing.
 */
export async function importSubscriptions(
  from: WebhookSubscriptionRepository,
  to: WebhookSubscriptionRepository,
): Promise<SubscriptionImport> {
  const { subscriptions, problems } = await from.load();
  const outcome: SubscriptionImport = { imported: [], present: [], refused: problems.map((problem) => `${problem}; it was not imported.`) };
  for (const subscription of subscriptions) {
    const copied = await to.update(subscription.name, (current) =>
      current ? { next: current, result: false } : { next: subscription, result: true },
    );
    (copied ? outcome.imported : outcome.present).push(subscription.name);
  }
  return outcome;
}
