/** Waiting, behind a port so that tests of retries, back-offs and grace periods never sleep. */
export interface Timer {
  /** Resolves after `ms` milliseconds, or as soon as `cancel` aborts (a wait nobody needs any more). */
  wait(ms: number, cancel?: AbortSignal): Promise<void>;
}
