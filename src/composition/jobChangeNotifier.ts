import type { Container } from 'inversify';
import { CreateJob } from '../application/cron/CreateJob.js';
import { EditJob } from '../application/cron/EditJob.js';
import { PauseJob } from '../application/cron/PauseJob.js';
import { RemoveJob } from '../application/cron/RemoveJob.js';
import { ResumeJob } from '../application/cron/ResumeJob.js';
import { RunDueJobs, type TickReport } from '../application/cron/RunDueJobs.js';
import { RunJobNow } from '../application/cron/RunJobNow.js';
import type { Logger } from '../application/ports/Logger.js';
import type { SchedulerProvider } from '../application/ports/SchedulerProvider.js';
import { errorText } from '../domain/errors.js';

/**
 * Tells the configured provider about every job this process changes, right after its write
 * (`jobsChanged`, docs/plugins.md), so that it can arm or disarm it. The provider is loaded
 * on the first change, and only when `cron.provider` names one, so commands that change nothing,
 * or run with the built-in ticker, load no plugin. The gateway hands it the provider it started.
 */
export class JobChangeNotifier {
  private provider: Promise<SchedulerProvider | null> | null = null;

  /** @param load the provider to tell, or null for none (the built-in ticker needs no telling). */
  constructor(
    private readonly load: () => Promise<SchedulerProvider | null>,
    private readonly log: Logger,
  ) {}

  /** From now on, tells `provider` (the one the gateway started). */
  use(provider: SchedulerProvider): void {
    this.provider = Promise.resolve(provider);
  }

  /** Tells the provider that these jobs changed; never throws, a failure is logged. */
  async jobsChanged(jobIds: readonly string[]): Promise<void> {
    try {
      this.provider ??= this.load();
      await (await this.provider)?.jobsChanged(jobIds);
    } catch (error) {
      this.log.warn(`the cron provider could not be told about changed jobs: ${errorText(error)}`);
    }
  }
}

/**
 * Makes the use cases that change a job (create, edit, pause, resume, run now, remove) tell the
 * notifier right after their write, whoever calls them: the CLI, the cronjob tool, the gateway.
 */
export function notifyJobChanges(container: Container, notifier: JobChangeNotifier): void {
  const after = <T extends { execute(input: never): Promise<unknown> }>(useCase: T, idOf: (result: never) => string): T => {
    const execute = useCase.execute.bind(useCase) as (input: unknown) => Promise<unknown>;
    (useCase as unknown as { execute: (input: unknown) => Promise<unknown> }).execute = async (input) => {
      const result = await execute(input);
      await notifier.jobsChanged([idOf(result as never)]);
      return result;
    };
    return useCase;
  };
  const jobId = (job: { id: string }) => job.id;
  container.onActivation(CreateJob, (_context, useCase) => after(useCase, jobId));
  container.onActivation(EditJob, (_context, useCase) => after(useCase, jobId));
  container.onActivation(PauseJob, (_context, useCase) => after(useCase, jobId));
  container.onActivation(ResumeJob, (_context, useCase) => after(useCase, jobId));
  container.onActivation(RemoveJob, (_context, useCase) => after(useCase, jobId));
  container.onActivation(RunJobNow, (_context, useCase) => after(useCase, (output: { job: { id: string } }) => output.job.id));
  // The command line's tick (implicit or `agent cron tick`): the jobs it ran, settled as missed or moved past a skipped slot,
  // so that a one-shot it ran is disarmed at once, not at the next reconcile. Its claims alone
  // (the gateway's DispatchDueJobs) are not wrapped: the gateway's provider hears of its runs itself.
  container.onActivation(RunDueJobs, (_context, tick) => {
    const execute = tick.execute.bind(tick);
    tick.execute = async (input) => {
      const report: TickReport = await execute(input);
      const changed = [
        ...report.ran.map((run) => run.job.id),
        ...report.missed.map((job) => job.id),
        ...report.skipped.map((skip) => skip.job.id),
      ];
      // Nothing changed: no provider is loaded, so a command that finds nothing due stays quick.
      if (changed.length > 0) await notifier.jobsChanged(changed);
      return report;
    };
    return tick;
  });
}
