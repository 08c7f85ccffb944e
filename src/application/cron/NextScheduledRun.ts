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

  execute(after?: Date): Promise<Date | null> {
    return this.repository.nextRunAt(after);
  }
}
