import type { Logger } from '../../application/ports/Logger.js';
import { MinuteTicker } from './MinuteTicker.js';
import { errorText } from '../../domain/errors.js';

/** Timers, injectable so tests can run the trigger without waiting. */
export interface TimerApi {
  set(callback: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
  now(): number;
}

const REAL_TIMERS: TimerApi = {
  set: (callback, delayMs) => setTimeout(callback, delayMs),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
  now: () => Date.now(),
};

/** Timers further out than this are left to the minute tick, which re-arms them. */
const ARM_HORIZON_MS = 60_000;
/** How soon to look again at a job that is still due right after a tick. */
const RETRY_OVERDUE_MS = 1_000;

/**
 * The gateway's built-in cron trigger: a tick every minute (node-cron), plus a timer armed for
 * the earliest `next_run_at`, so a job fires within a second of its time rather than up to a
 * minute late. Ticks never overlap: one asked for while another runs happens right after it.
 * Jobs created by other processes are picked up by the next minute tick, which re-arms the timer.
 */
export class GatewayCronTrigger {
  private readonly ticker: MinuteTicker;
  private timer: unknown = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly tick: () => Promise<void>,
    private readonly nextRunAt: () => Promise<Date | null>,
    private readonly log: Logger,
    private readonly timers: TimerApi = REAL_TIMERS,
  ) {
    this.ticker = new MinuteTicker(() => this.runTick(), (error) => this.reportError(error), true);
  }

  /** Ticks once now, then every minute and whenever a job is due. */
  async start(): Promise<void> {
    this.stopped = false;
    this.ticker.start();
    await this.runTick();
  }

  /** Stops triggering and waits, up to `graceMs`, for the tick in progress (and its runs) to end. */
  async stop(graceMs: number): Promise<boolean> {
    this.stopped = true;
    this.disarm();
    await this.ticker.stop();
    if (!this.running) return true;
    let deadline: unknown = null;
    const finished = await Promise.race([
      this.running.then(() => true),
      new Promise<boolean>((resolve) => (deadline = this.timers.set(() => resolve(false), graceMs))),
    ]);
    this.timers.clear(deadline);
    return finished;
  }

  /** Runs a tick now, or right after the one in progress; then re-arms the timer. */
  runTick(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.tick();
        } while (this.again && !this.stopped);
        await this.arm();
      } catch (error) {
        this.reportError(error);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  private async arm(): Promise<void> {
    this.disarm();
    if (this.stopped) return;
    const next = await this.nextRunAt();
    if (!next) return;
    const untilDue = next.getTime() - this.timers.now();
    if (untilDue > ARM_HORIZON_MS) return;
    // Still due right after a tick: another process holds the tick lock or is claiming it.
    // Try again shortly rather than spinning.
    const delay = untilDue > 0 ? untilDue : RETRY_OVERDUE_MS;
    this.timer = this.timers.set(() => {
      this.timer = null;
      void this.runTick();
    }, delay);
  }

  private disarm(): void {
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timer = null;
  }

  private reportError(error: unknown): void {
    this.log.error('cron tick failed', { error: errorText(error) });
  }
}
