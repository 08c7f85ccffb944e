import { NextScheduledRun } from '../../application/cron/NextScheduledRun.js';
import type { SchedulerContext, SchedulerProvider } from '../../application/ports/SchedulerProvider.js';
import { GatewayCronTrigger, type TimerApi } from './GatewayCronTrigger.js';

/** The name the built-in ticker goes by in logs (`cron.provider` empty selects it). */
export const BUILT_IN_PROVIDER_NAME = 'built-in ticker';

/**
 * The built-in ticker as a `SchedulerProvider` (decisions §11): it lives in the core, so the
 * fallback always exists. It fires through the context's `due()` whenever a job may have become
 * due (see GatewayCronTrigger); `jobsChanged` has nothing to do, as the store watch already sees
 * every change, made by this process or another.
 */
export class BuiltInTickerProvider implements SchedulerProvider {
  readonly name = BUILT_IN_PROVIDER_NAME;
  private trigger: GatewayCronTrigger | null = null;

  /**
   * @param watchStore calls `onChange` when the job store may have changed; returns the unwatch.
   * @param timers injectable so tests drive the trigger without waiting.
   */
  constructor(
    private readonly watchStore: (onChange: () => void) => () => void,
    private readonly timers?: TimerApi,
  ) {}

  problem(): string | null {
    return null;
  }

  async start(context: SchedulerContext): Promise<void> {
    if (this.trigger) return;
    const nextRun = new NextScheduledRun(context.jobs);
    this.trigger = new GatewayCronTrigger(
      {
        dispatch: async () => ({ lockBusy: (await context.fire.due()).retrySoon }),
        nextRunAt: (after) => nextRun.execute(after),
        watchStore: this.watchStore,
        onRunFinished: (listener) => context.fire.onRunFinished(() => listener()),
      },
      context.log,
      this.timers,
    );
    await this.trigger.start();
  }

  async stop(): Promise<void> {
    const trigger = this.trigger;
    this.trigger = null;
    await trigger?.stop();
  }

  async jobsChanged(): Promise<void> {}
}
