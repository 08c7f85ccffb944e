import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import type { JobChange, JobControl } from '../ports/JobControl.js';
import type { JobSnapshot } from '../ports/JobRepository.js';
import { CreateJob, type CreateJobInput } from './CreateJob.js';
import { EditJob, type EditJobInput } from './EditJob.js';
import { JobWarnings } from './JobWarnings.js';
import { ListJobs } from './ListJobs.js';
import { PauseJob } from './PauseJob.js';
import { RedeliverJobRun, type RedeliverJobRunOutput } from './RedeliverJobRun.js';
import { RemoveJob } from './RemoveJob.js';
import { ResumeJob } from './ResumeJob.js';
import { RunJobNow, type RunJobNowOutput } from './RunJobNow.js';

/**
 * The JobControl port over the job use cases: the entry the job tool drives, as the command
 * line drives the use cases directly, and the same JobWarnings after a create or an update. It adds
 * nothing of its own, so both ways behave alike.
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
    @inject(JobWarnings) private readonly warnings: JobWarnings,
    @inject(RedeliverJobRun) private readonly redeliverJobRun: RedeliverJobRun,
  ) {}

  async create(input: CreateJobInput): Promise<JobChange> {
    const job = await this.createJob.execute(input);
    return { job, warnings: await this.warnings.about(job) };
  }

  list(): Promise<JobSnapshot> {
    return this.listJobs.execute();
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

  run(job: string): Promise<RunJobNowOutput> {
    // The job tool's "run" is an explicit request with no flag to confirm it: it runs a one-shot
    // before its time as it always has, and its result shows the job completed.
    return this.runJobNow.execute({ job, force: true });
  }

  redeliver(job: string, run?: string | null): Promise<RedeliverJobRunOutput> {
    return this.redeliverJobRun.execute({ job, run });
  }

  remove(job: string): Promise<Job> {
    return this.removeJob.execute({ job });
  }
}
