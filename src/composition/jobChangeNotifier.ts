import type { Container } from 'inversify';
import { CreateJob } from '../application/cron/CreateJob.js';
import { EditJob } from '../application/cron/EditJob.js';
import { PauseJob } from '../application/cron/PauseJob.js';
import { RemoveJob } from '../application/cron/RemoveJob.js';
import { ResumeJob } from '../application/cron/ResumeJob.js';
import { RunJobNow } from '../application/cron/RunJobNow.js';
import type { Logger } from '../application/ports/Logger.js';
import type { SchedulerProvider } from '../application/ports/SchedulerProvider.js';
import { errorText } from '../domain/errors.js';

/**
 * Tells the configured provider about every job this process changes (decisions §11: "every
 * process that changes a job arms or disarms it right after its write"). The provider is loaded
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
}
