/** Waiting, behind a port so that tests of retries, back-offs and grace periods never sleep. */
export interface Timer {
  /**
   * Resolves after `ms` milliseconds, or as soon as `cancel` aborts (a wait nobody needs any more).
   * A `background` wait does not by itself keep the process running: the poll of a long-lived
   * component must not hold up the exit of a process that is otherwise done.
   */
  wait(ms: number, cancel?: AbortSignal, options?: { background?: boolean }): Promise<void>;
}
