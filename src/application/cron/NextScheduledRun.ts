import { inject, injectable } from 'inversify';
import type { JobRepository } from '../ports/JobRepository.js';
import { TOKENS } from '../ports/tokens.js';

/**
 * When the next job is due: the earliest `next_run_at` among scheduled, enabled jobs, or null
 * when none is. A trigger arms a timer for it so a job fires on time rather than at the next
 * periodic tick. With `after`, only times later than it count: jobs already due are either
 * started or waiting for a run slot, and a run's end, not a timer, starts those.
 */
@injectable()
export class NextScheduledRun {
  constructor(@inject(TOKENS.JobRepository) private readonly repository: JobRepository) {}

  async execute(after?: Date): Promise<Date | null> {
    const { jobs } = await this.repository.load();
    let earliest: number | null = null;
    for (const job of jobs) {
      if (job.state !== 'scheduled' || !job.enabled || job.next_run_at === null) continue;
      const at = Date.parse(job.next_run_at);
      if (Number.isNaN(at) || (after && at <= after.getTime())) continue;
      if (earliest === null || at < earliest) earliest = at;
    }
    return earliest === null ? null : new Date(earliest);
  }
}
