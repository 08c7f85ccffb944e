import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import type { JobControl } from '../ports/JobControl.js';
import type { JobSnapshot } from '../ports/JobRepository.js';
import { CreateJob, type CreateJobInput } from './CreateJob.js';
import { EditJob, type EditJobInput } from './EditJob.js';
import { ListJobs } from './ListJobs.js';
import { PauseJob } from './PauseJob.js';
import { RemoveJob } from './RemoveJob.js';
import { ResumeJob } from './ResumeJob.js';
import { RunJobNow, type RunJobNowOutput } from './RunJobNow.js';

/**
 * The JobControl port over the job use cases: the entry the job tool drives, as the command
 * line drives the use cases directly. It adds nothing of its own, so both ways behave alike.
 */
@injectable()
export class JobControlService implements JobControl {
  constructor(
    @inject(CreateJob) private readonly createJob: CreateJob,
    @inject(ListJobs) private readonly listJobs: ListJobs,
    @inject(EditJob) private readonly editJob: EditJob,
    @inject(PauseJob) private readonly pauseJob: PauseJob,
    @inject(ResumeJob) private readonly resumeJob: ResumeJob,
    @inject(RunJobNow) private readonly runJobNow: RunJobNow,
    @inject(RemoveJob) private readonly removeJob: RemoveJob,
  ) {}

  create(input: CreateJobInput): Promise<Job> {
    return this.createJob.execute(input);
  }

  list(): Promise<JobSnapshot> {
    return this.listJobs.execute();
  }

  update(input: EditJobInput): Promise<Job> {
    return this.editJob.execute(input);
  }

  pause(job: string): Promise<Job> {
    return this.pauseJob.execute({ job });
  }

  resume(job: string): Promise<Job> {
    return this.resumeJob.execute({ job });
  }

  run(job: string): Promise<RunJobNowOutput> {
    return this.runJobNow.execute({ job });
  }

  remove(job: string): Promise<Job> {
    return this.removeJob.execute({ job });
  }
}
