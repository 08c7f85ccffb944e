import { ContainerModule } from 'inversify';
import { CreateJob } from '../../application/cron/CreateJob.js';
import { EditJob } from '../../application/cron/EditJob.js';
import { JobExecution } from '../../application/cron/JobExecution.js';
import { ListJobs } from '../../application/cron/ListJobs.js';
import { NextScheduledRun } from '../../application/cron/NextScheduledRun.js';
import { PauseJob } from '../../application/cron/PauseJob.js';
import { RemoveJob } from '../../application/cron/RemoveJob.js';
import { ResumeJob } from '../../application/cron/ResumeJob.js';
import { RunDueJobs } from '../../application/cron/RunDueJobs.js';
import { RunJobNow } from '../../application/cron/RunJobNow.js';

export const cronUseCaseModule = new ContainerModule(({ bind }) => {
  bind(JobExecution).toSelf().inSingletonScope();
  bind(CreateJob).toSelf().inSingletonScope();
  bind(EditJob).toSelf().inSingletonScope();
  bind(ListJobs).toSelf().inSingletonScope();
  bind(PauseJob).toSelf().inSingletonScope();
  bind(ResumeJob).toSelf().inSingletonScope();
  bind(RemoveJob).toSelf().inSingletonScope();
  bind(RunJobNow).toSelf().inSingletonScope();
  bind(RunDueJobs).toSelf().inSingletonScope();
  bind(NextScheduledRun).toSelf().inSingletonScope();
});
