import type { SchedulerContext, SchedulerProvider } from '../../application/ports/SchedulerProvider.js';
import type { TimerApi } from './GatewayCronTrigger.js';

/** The name the built-in ticker goes by in logs (`cron.provider` empty selects it). */
export const BUILT_IN_PROVIDER_NAME = 'built-in ticker';

/**
 * How often the built-in ticker looks for due jobs, by process:
 * - `continuous` (the gateway): whenever a job may have become due, within a second (GatewayCronTrigger);
 * - `minute` (an `agent chat` conversation): once at start, then at the start of every minute;
 * - `once` (a CLI command's implicit tick): once at start, and never again.
 */
export type TickerCadence =
  | {
      kind: 'continuous';
      /** Calls `onChange` when the job store may have changed; returns the unwatch. */
      watchStore: (onChange: () => void) => () => void;
      /** Injectable so tests drive the trigger without waiting. */
      timers?: TimerApi;
    }
  | {
      kind: 'minute';
      /** Where a failed minute look is reported; the ticker goes on. */
      onError: (error: unknown) => void;
    }
  | { kind: 'once' };

/** What a started cadence leaves running. */
interface Running {
  stop(): Promise<void>;
}

/**
 * The built-in ticker as a `SchedulerProvider`: it lives in the core, so the
 * fallback always exists, and it is the provider of CLI mode too (`agent chat`, the implicit
 * tick). It fires through the context's `due()`; `jobsChanged` has nothing to do, as its looks
 * read the store, which every change, made by this process or another, goes to. `start` resolves
 * once the first look is done and rejects with that look's error.
 *
 * The timer machinery is loaded only for the cadences that need it, so a command's one look
 * does not pay for node-cron.
 */
export class BuiltInTickerProvider implements SchedulerProvider {
  readonly name = BUILT_IN_PROVIDER_NAME;
  /** The cadence under way (or starting), null while stopped. */
  private running: Promise<Running> | null = null;

  constructor(private readonly cadence: TickerCadence) {}

  problem(): string | null {
    return null;
  }

  async start(context: SchedulerContext): Promise<void> {
    if (this.running) {
      await this.running;
      return;
    }
    const running = this.begin(context);
    this.running = running;
    try {
      await running;
    } catch (error) {
      if (this.running === running) this.running = null;
      throw error;
    }
  }

  /** Stops looking; a start still under way is waited for, then stopped. */
  async stop(): Promise<void> {
    const running = this.running;
    this.running = null;
    await (await running?.catch(() => null))?.stop();
  }

  async jobsChanged(): Promise<void> {}

  private async begin(context: SchedulerContext): Promise<Running> {
    const cadence = this.cadence;
    if (cadence.kind === 'once') {
      await context.fire.due();
      return { stop: async () => undefined };
    }
    if (cadence.kind === 'minute') {
      await context.fire.due();
      const { MinuteTicker } = await import('./MinuteTicker.js');
      const ticker = new MinuteTicker(async () => void (await context.fire.due()), cadence.onError);
      ticker.start();
      return ticker;
    }
    const [{ GatewayCronTrigger }, { NextScheduledRun }] = await Promise.all([
      import('./GatewayCronTrigger.js'),
      import('../../application/cron/NextScheduledRun.js'),
    ]);
    const nextRun = new NextScheduledRun(context.jobs);
    const trigger = new GatewayCronTrigger(
      {
        dispatch: async () => ({ lockBusy: (await context.fire.due()).retrySoon }),
        nextRunAt: (after) => nextRun.execute(after),
        watchStore: cadence.watchStore,
        onRunFinished: (listener) => context.fire.onRunFinished(() => listener()),
        claimAheadMs: context.fire.claimAheadMs ?? 0,
      },
      context.log,
      cadence.timers,
    );
    await trigger.start();
    return trigger;
  }
}
