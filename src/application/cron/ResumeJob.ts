import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import { resumeJob } from '../../domain/jobLifecycle.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { changeJob } from './changeJobState.js';

/** Resumes a paused job; its next run is computed from now. */
@injectable()
export class ResumeJob {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
  ) {}

  execute(input: { job: string }): Promise<Job> {
    return changeJob(this.repository, input.job, (job) => resumeJob(job, this.clock.now(), this.settings.timeZone));
  }
}
