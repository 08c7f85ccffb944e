import { ContainerModule } from 'inversify';
import { CancelJobRun } from '../../application/cron/CancelJobRun.js';
import { CancelRequestedRuns } from '../../application/cron/CancelRequestedRuns.js';
import { CreateJob } from '../../application/cron/CreateJob.js';
import { EditJob } from '../../application/cron/EditJob.js';
import { CheckJobs } from '../../application/cron/CheckJobs.js';
import { JobChanges } from '../../application/cron/JobChanges.js';
import { JobControlService } from '../../application/cron/JobControlService.js';
import { JobExecution } from '../../application/cron/JobExecution.js';
import { JobPreflight } from '../../application/cron/JobPreflight.js';
import { JobFileChecks } from '../../application/cron/JobFileChecks.js';
import { JobAnswers } from '../../application/cron/JobAnswers.js';
import { JobRunMarks } from '../../application/cron/JobRunMarks.js';
import { JobRunReports } from '../../application/cron/JobRunReports.js';
import { JobRunSteps } from '../../application/cron/JobRunSteps.js';
import { PendingJobDeliveries } from '../../application/cron/PendingJobDeliveries.js';
import { JobWarnings } from '../../application/cron/JobWarnings.js';
import { ListJobRuns } from '../../application/cron/ListJobRuns.js';
import { ListJobs } from '../../application/cron/ListJobs.js';
import { NextScheduledRun } from '../../application/cron/NextScheduledRun.js';
import { PauseJob } from '../../application/cron/PauseJob.js';
import { RedeliverJobRun } from '../../application/cron/RedeliverJobRun.js';
import { RemoveJob } from '../../application/cron/RemoveJob.js';
import { ResumeJob } from '../../application/cron/ResumeJob.js';
import { JOB_EXECUTION_ON_DEMAND, RunDueJobs } from '../../application/cron/RunDueJobs.js';
import { DispatchDueJobs } from '../../application/cron/DispatchDueJobs.js';
import { DispatchedRuns } from '../../application/cron/DispatchedRuns.js';
import { FireJobSlot } from '../../application/cron/FireJobSlot.js';
import { RunJobNow } from '../../application/cron/RunJobNow.js';
import { ShowJob } from '../../application/cron/ShowJob.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { CronDeliveries } from '../../application/cron/CronDeliveries.js';
import { LeftOverCronAnswers } from '../../application/cron/LeftOverCronAnswers.js';
import { DeliveryLanes } from '../../application/delivery/DeliveryLanes.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { webhookExtra, DEFAULT_MAX_CONCURRENT_DELIVERIES } from '../../adapters/config/webhookSettings.js';
import { ABANDONED_RUNS_ON_DEMAND, AbandonedRuns } from '../../application/runs/AbandonedRuns.js';
import { RunClaimants } from '../../application/runs/RunClaimants.js';
import { RunStops } from '../../application/runs/RunStops.js';
import { DueJobClaims } from '../../application/cron/DueJobClaims.js';

export const cronUseCaseModule = new ContainerModule(({ bind }) => {
  bind(JobExecution).toSelf().inSingletonScope();
  bind(JobRunSteps).toSelf().inSingletonScope();
  bind(JobAnswers).toSelf().inSingletonScope();
  bind(JobRunReports).toSelf().inSingletonScope();
  bind(JobRunMarks).toSelf().inSingletonScope();
  bind(PendingJobDeliveries).toSelf().inSingletonScope();
  bind(JOB_EXECUTION_ON_DEMAND)
    .toDynamicValue((context) => {
      let execution: JobExecution | undefined;
      return () => (execution ??= context.get(JobExecution));
    })
    .inSingletonScope();
  bind(RunClaimants).toSelf().inSingletonScope();
  bind(AbandonedRuns).toSelf().inSingletonScope();
  bind(ABANDONED_RUNS_ON_DEMAND)
    .toDynamicValue((context) => {
      let abandoned: AbandonedRuns | undefined;
      return () => (abandoned ??= context.get(AbandonedRuns));
    })
    .inSingletonScope();
  bind(JobPreflight).toSelf().inSingletonScope();
  bind(JobFileChecks).toSelf().inSingletonScope();
  bind(CheckJobs).toSelf().inSingletonScope();
  bind(JobWarnings).toSelf().inSingletonScope();
  bind(CreateJob).toSelf().inSingletonScope();
  bind(EditJob).toSelf().inSingletonScope();
  bind(ListJobs).toSelf().inSingletonScope();
  bind(PauseJob).toSelf().inSingletonScope();
  bind(ResumeJob).toSelf().inSingletonScope();
  bind(RemoveJob).toSelf().inSingletonScope();
  bind(RunJobNow).toSelf().inSingletonScope();
  // Time limits and cancels of the runs under way in this process (docs/runs.md).
  bind(RunStops).toSelf().inSingletonScope();
  bind(CancelJobRun).toSelf().inSingletonScope();
  bind(CancelRequestedRuns).toSelf().inSingletonScope();
  bind(DueJobClaims).toSelf().inSingletonScope();
  bind(RunDueJobs).toSelf().inSingletonScope();
  bind(DispatchedRuns).toSelf().inSingletonScope();
  bind(DispatchDueJobs).toSelf().inSingletonScope();
  // The gateway's lanes, one per platform, shared by cron answers and webhook answers
  // (`platforms.webhook.extra.max_concurrent_deliveries` at once in each).
  bind(TOKENS.DeliveryLanes)
    .toDynamicValue(
      (context) =>
        new DeliveryLanes(
          webhookExtra(context.get(CONFIG_TOKENS.AgentConfig)).max_concurrent_deliveries ?? DEFAULT_MAX_CONCURRENT_DELIVERIES,
        ),
    )
    .inSingletonScope();
  bind(LeftOverCronAnswers).toSelf().inSingletonScope();
  bind(CronDeliveries).toSelf().inSingletonScope();
  bind(FireJobSlot).toSelf().inSingletonScope();
  bind(NextScheduledRun).toSelf().inSingletonScope();
  bind(ShowJob).toSelf().inSingletonScope();
  bind(ListJobRuns).toSelf().inSingletonScope();
  bind(RedeliverJobRun).toSelf().inSingletonScope();
  // The job tool's way to the use cases above.
  bind(JobChanges).toSelf().inSingletonScope();
  bind(TOKENS.JobControl).to(JobControlService).inSingletonScope();
});
