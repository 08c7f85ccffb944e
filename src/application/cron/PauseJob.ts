import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import { pauseJob } from '../../domain/jobLifecycle.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import { TOKENS } from '../ports/tokens.js';
import { changeJob } from './changeJobState.js';

/** Pauses a job (a run in progress finishes), with an optional reason; pausing a paused job changes nothing but its reason. */
@injectable()
export class PauseJob {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  execute(input: { job: string; reason?: string | null }): Promise<Job> {
    return changeJob(this.repository, input.job, (job) => pauseJob(job, this.clock.now(), input.reason));
  }
}
