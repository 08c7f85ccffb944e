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

/** What the trigger drives: claim and start due jobs; it never waits for their runs. */
export interface TriggerTarget {
  dispatch(): Promise<{ lockBusy: boolean }>;
  /** The earliest `next_run_at` later than `after`, or null. */
  nextRunAt(after: Date): Promise<Date | null>;
  /** Calls `onChange` when the job store may have changed (another process wrote it); returns the unwatch. */
  watchStore(onChange: () => void): () => void;
  /** Calls `listener` when a run ends and its slot is free. */
  onRunFinished(listener: () => void): void;
  /** How far ahead of their slots `dispatch` claims jobs (ms): the timer wakes that much early. 0 when absent. */
  claimAheadMs?: number;
}

/** Timers further out than this are left to the minute tick, which re-arms them. */
const ARM_HORIZON_MS = 60_000;
/** How soon to try again when another process held the tick lock. */
const LOCK_BUSY_RETRY_MS = 250;

/**
 * The gateway's built-in cron trigger (docs/gateway.md): it decides *when* to look for due jobs,
 * and looks whenever one may have become due —
 * - a timer armed for the earliest `next_run_at` (less `claimAheadMs`, when the dispatcher claims
 *   ahead of the slots), so a job starts within a second of its time;
 * - a change to the job store by another process (`agent cron create` while the gateway runs);
 * - the end of a run, whose slot may take a job that waited for one;
 * - a tick every minute (node-cron), the backstop for everything else.
 * Each look only claims and starts runs, so it takes milliseconds whatever is running. Looks
 * asked for while one is under way are folded into one more right after it.
 */
export class GatewayCronTrigger {
  private readonly ticker: MinuteTicker;
  private timer: unknown = null;
  private looking: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private unwatch: (() => void) | null = null;
  /** The message of the failure reported last, while looks keep failing: an outage is logged once, and its end once. */
  private failing: string | null = null;

  constructor(
    private readonly target: TriggerTarget,
    private readonly log: Logger,
    private readonly timers: TimerApi = REAL_TIMERS,
  ) {
    this.ticker = new MinuteTicker(
      () => this.look(),
      (error) => this.reportError(error),
      true,
    );
    target.onRunFinished(() => void this.look());
  }

  /** Looks once now (resolves when that look is done), then whenever a job may be due. */
  async start(): Promise<void> {
    this.stopped = false;
    this.ticker.start();
    this.unwatch = this.target.watchStore(() => void this.look());
    await this.look();
  }

  /** Stops looking: no job is claimed after this resolves. Runs in progress are not touched. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.disarm();
    this.unwatch?.();
    this.unwatch = null;
    await this.ticker.stop();
    await this.looking;
  }

  /** Looks for due jobs now, or right after the look in progress; then re-arms the timer. */
  look(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.looking) {
      this.again = true;
      return this.looking;
    }
    this.looking = (async () => {
      try {
        do {
          this.again = false;
          // Jobs due by the time the look began were seen by it; one that fell due while it
          // looked was not, and must not be mistaken for one it left waiting for a slot.
          const lookedAt = this.timers.now();
          const { lockBusy } = await this.target.dispatch();
          if (!this.again) await this.arm(lockBusy, lookedAt);
          if (this.failing !== null) {
            this.failing = null;
            this.log.info('cron ticks work again');
          }
        } while (this.again && !this.stopped);
      } catch (error) {
        this.reportError(error);
      } finally {
        this.looking = null;
      }
    })();
    return this.looking;
  }

  private async arm(lockBusy: boolean, lookedAt: number): Promise<void> {
    this.disarm();
    if (this.stopped) return;
    let delay: number;
    if (lockBusy) {
      // Another process is claiming; its claims are written in a moment.
      delay = LOCK_BUSY_RETRY_MS;
    } else {
      const ahead = this.target.claimAheadMs ?? 0;
      const next = await this.target.nextRunAt(new Date(lookedAt));
      if (!next) return;
      // A job due within the lead that the look left unclaimed (no run slot was free) is looked
      // at again at its time, when it is due and waits for a slot; any other, the lead before it.
      const at = next.getTime() <= lookedAt + ahead ? next.getTime() : next.getTime() - ahead;
      delay = at - this.timers.now();
      if (delay > ARM_HORIZON_MS) return;
    }
    if (this.stopped) return;
    this.timer = this.timers.set(
      () => {
        this.timer = null;
        void this.look();
      },
      Math.max(0, delay),
    );
  }

  private disarm(): void {
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timer = null;
  }

  /** Logs a failed look, unless looks have been failing the same way since the last one reported. */
  private reportError(error: unknown): void {
    const text = errorText(error);
    if (this.failing === text) return;
    this.failing = text;
    this.log.error('cron tick failed; the next looks are not logged until they work again or fail differently', { error: text });
  }
}
