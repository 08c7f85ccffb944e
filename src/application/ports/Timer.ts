/** Waiting, behind a port so that tests of retries, back-offs, grace periods and idle budgets never sleep. */
export interface Timer {
  /**
   * Resolves after `ms` milliseconds, or as soon as `cancel` aborts (a wait nobody needs any more).
   * A `background` wait does not by itself keep the process running: the poll of a long-lived
   * component must not hold up the exit of a process that is otherwise done.
   */
  wait(ms: number, cancel?: AbortSignal, options?: { background?: boolean }): Promise<void>;
  /**
   * Milliseconds on a monotonic clock from an arbitrary start, on the same time line as `wait`:
   * for measuring how long something took, never a date.
   */
  monotonicNow(): number;
  /**
   * Resolves once the event loop has had a turn (I/O callbacks, timers): for spreading a burst of
   * synchronous work over turns. Optional: without it, nothing waits.
   */
  yieldTurn?(): Promise<void>;
}
