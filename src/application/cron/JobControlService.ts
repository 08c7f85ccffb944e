import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import type { JobChange, JobControl } from '../ports/JobControl.js';
import type { JobSnapshot } from '../ports/JobRepository.js';
import type { CreateJobInput } from './CreateJob.js';
import type { EditJobInput } from './EditJob.js';
import { JobChanges } from './JobChanges.js';
import { ListJobs } from './ListJobs.js';
import { RedeliverJobRun, type RedeliverJobRunOutput } from './RedeliverJobRun.js';
import { RunJobNow, type RunJobNowOutput } from './RunJobNow.js';

/**
 * The JobControl port over the job use cases: the entry the job tool drives, as the command
 * line drives the use cases directly. The changes to stored jobs, with the same JobWarnings after
 * a create or an update, are JobChanges'; listing, running and redelivering are here. It adds
 * nothing of its own, so both ways behave alike.
 */
@injectable()
export class JobControlService implements JobControl {
  constructor(
    @inject(JobChanges) private readonly changes: JobChanges,
    @inject(ListJobs) private readonly listJobs: ListJobs,
    @inject(RunJobNow) private readonly runJobNow: RunJobNow,
    @inject(RedeliverJobRun) private readonly redeliverJobRun: RedeliverJobRun,
  ) {}

  create(input: CreateJobInput): Promise<JobChange> {
    return this.changes.create(input);
  }

  list(): Promise<JobSnapshot> {
    return this.listJobs.execute();
  }

  update(input: EditJobInput): Promise<JobChange> {
    return this.changes.update(input);
  }

  pause(job: string, reason?: string | null): Promise<Job> {
    return this.changes.pause(job, reason);
  }

  resume(job: string): Promise<Job> {
    return this.changes.resume(job);
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
    return this.changes.remove(job);
  }
}
