import cron, { type ScheduledTask } from 'node-cron';

/**
 * Calls `onTick` at the start of every minute until stopped, never two at once (node-cron's
 * `noOverlap`). With `keepAlive` false (the default) the timer does not keep the process alive
 * on its own. Errors of `onTick` are passed to `onError`; the ticker goes on.
 */
export class MinuteTicker {
  private task: ScheduledTask | null = null;

  constructor(
    private readonly onTick: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
    private readonly keepAlive = false,
  ) {}

  start(): void {
    if (this.task) return;
    this.task = cron.schedule(
      '* * * * *',
      async () => {
        try {
          await this.onTick();
        } catch (error) {
          this.onError(error);
        }
      },
      { noOverlap: true, unref: !this.keepAlive, name: 'agent-minute-tick' },
    );
  }

  async stop(): Promise<void> {
    const task = this.task;
    this.task = null;
    await task?.stop();
  }
}
