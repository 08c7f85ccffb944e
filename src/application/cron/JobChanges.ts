import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import type { JobChange } from '../ports/JobControl.js';
import { CreateJob, type CreateJobInput } from './CreateJob.js';
import { EditJob, type EditJobInput } from './EditJob.js';
import { JobWarnings } from './JobWarnings.js';
import { PauseJob } from './PauseJob.js';
import { RemoveJob } from './RemoveJob.js';
import { ResumeJob } from './ResumeJob.js';

/**
 * The changes the job tool makes to stored jobs (JobControl): create, update, pause, resume and
 * remove, each through its use case, so that the checks and the refusals are those of `agent
 * cron`; a create or an update also says what would keep the job from doing what it says
 * (JobWarnings).
 */
@injectable()
export class JobChanges {
  constructor(
    @inject(CreateJob) private readonly createJob: CreateJob,
    @inject(EditJob) private readonly editJob: EditJob,
    @inject(PauseJob) private readonly pauseJob: PauseJob,
    @inject(ResumeJob) private readonly resumeJob: ResumeJob,
    @inject(RemoveJob) private readonly removeJob: RemoveJob,
    @inject(JobWarnings) private readonly warnings: JobWarnings,
  ) {}

  async create(input: CreateJobInput): Promise<JobChange> {
    const job = await this.createJob.execute(input);
    return { job, warnings: await this.warnings.about(job) };
  }

  async update(input: EditJobInput): Promise<JobChange> {
    const job = await this.editJob.execute(input);
    return { job, warnings: await this.warnings.about(job) };
  }

  pause(job: string, reason?: string | null): Promise<Job> {
    return this.pauseJob.execute({ job, reason });
  }

  resume(job: string): Promise<Job> {
    return this.resumeJob.execute({ job });
  }

  remove(job: string): Promise<Job> {
    return this.removeJob.execute({ job });
  }
}
