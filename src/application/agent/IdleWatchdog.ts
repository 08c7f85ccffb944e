import type { Timer } from '../ports/Timer.js';

/**
 * Fires once when nothing has happened for a whole budget (the agent run's idle budget).
 * Callers report activity with `touch()`; the watchdog does not start a new wait on every
 * touch, which would cost a timer per streamed token, but waits again for the time that is
 * left whenever it wakes up early.
 */
export class IdleWatchdog {
  private lastActivity = 0;
  private stopper: AbortController | null = null;
  private hasFired = false;
  /** Waits on purpose under way (a rate-limited provider's throttle): the budget does not run out during them. */
  private pauses = 0;

  /**
   * @param budgetMs milliseconds of inactivity allowed; null = no limit (the watchdog never fires)
   * @param onIdle called once, when the budget runs out
   * @param timer waits and the monotonic time they are measured on
   */
  constructor(
    readonly budgetMs: number | null,
    private readonly onIdle: () => void,
    private readonly timer: Timer,
  ) {}

  /** Whether the budget ran out. */
  get fired(): boolean {
    return this.hasFired;
  }

  /** Starts counting from now. Calling it again while running restarts the count. */
  start(): void {
    if (this.budgetMs === null || this.hasFired) return;
    this.stop();
    const stopper = new AbortController();
    this.stopper = stopper;
    this.lastActivity = this.timer.monotonicNow();
    void this.watch(this.budgetMs, stopper.signal);
  }

  /** Something happened: the idle count starts again. */
  touch(): void {
    this.lastActivity = this.timer.monotonicNow();
  }

  /** A wait on purpose begins: until `resume`, inactivity does not count. */
  pause(): void {
    this.pauses += 1;
  }

  /** The wait on purpose is over: the idle count starts again from now. */
  resume(): void {
    this.pauses = Math.max(0, this.pauses - 1);
    this.touch();
  }

  /** Stops for good; `onIdle` will not be called after this. Idempotent. */
  stop(): void {
    // With a reason: abort() without one makes a DOMException, stack and all, for every session.
    this.stopper?.abort('stopped');
    this.stopper = null;
  }

  private async watch(budgetMs: number, stopped: AbortSignal): Promise<void> {
    let delayMs = budgetMs;
    for (;;) {
      await this.timer.wait(Math.max(1, Math.ceil(delayMs)), stopped);
      if (stopped.aborted) return;
      if (this.pauses > 0) {
        delayMs = budgetMs;
        continue;
      }
      const idleFor = this.timer.monotonicNow() - this.lastActivity;
      if (idleFor >= budgetMs) break;
      delayMs = budgetMs - idleFor;
    }
    this.stopper = null;
    this.hasFired = true;
    this.onIdle();
  }
}
