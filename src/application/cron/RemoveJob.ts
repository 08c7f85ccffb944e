import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import { followersOf } from '../../domain/jobChains.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { RunOutputStore } from '../ports/RunOutputStore.js';
import { TOKENS } from '../ports/tokens.js';

/**
 * Deletes a job and its output files. The jobs that ran after it no longer do: the link is
 * dropped from each (docs/cron.md, Chains); one that ran only after other jobs then waits for a
 * schedule or a link (`agent cron show` says so).
 */
@injectable()
export class RemoveJob {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.RunOutputStore) private readonly outputs: RunOutputStore,
  ) {}

  async execute(input: { job: string }): Promise<Job> {
    const removed = await this.repository.remove(input.job);
    await this.outputs.removeAll(removed.id);
    for (const { job: follower } of followersOf((await this.repository.load()).jobs, removed.id)) {
      await this.repository.updateById(follower.id, (current) => {
        const after = (current.after ?? []).filter((link) => link.job !== removed.id);
        return { job: { ...current, after }, result: null };
      });
    }
    return removed;
  }
}
