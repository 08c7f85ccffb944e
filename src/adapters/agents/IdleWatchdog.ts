/**
 * Fires once when nothing has happened for a whole budget (spec "Limits": the agent run idle
 * budget). Callers report activity with `touch()`; the watchdog does not restart a timer on
 * every touch, which would cost a timer per streamed token, but re-arms itself for the time
 * that is left whenever it wakes up early.
 */
export class IdleWatchdog {
  private lastActivity = 0;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private hasFired = false;

  /**
   * @param budgetMs milliseconds of inactivity allowed; null = no limit (the watchdog never fires)
   * @param onIdle called once, when the budget runs out
   * @param now a monotonic clock in milliseconds
   */
  constructor(
    readonly budgetMs: number | null,
    private readonly onIdle: () => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether the budget ran out. */
  get fired(): boolean {
    return this.hasFired;
  }

  /** Starts counting from now. Calling it again while running restarts the count. */
  start(): void {
    if (this.budgetMs === null || this.hasFired) return;
    this.running = true;
    this.lastActivity = this.now();
    this.arm(this.budgetMs);
  }

  /** Something happened: the idle count starts again. */
  touch(): void {
    this.lastActivity = this.now();
  }

  /** Stops for good; `onIdle` will not be called after this. Idempotent. */
  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.check(), Math.max(1, Math.ceil(delayMs)));
  }

  private check(): void {
    if (!this.running || this.budgetMs === null) return;
    const idleFor = this.now() - this.lastActivity;
    if (idleFor < this.budgetMs) {
      this.arm(this.budgetMs - idleFor);
      return;
    }
    this.running = false;
    this.hasFired = true;
    this.onIdle();
  }
}
