/** Waiting, behind a port so that tests of retries and back-offs never sleep. */
export interface Timer {
  /** Resolves after `ms` milliseconds. */
  wait(ms: number): Promise<void>;
}
