/** A held tick lock; releasing twice is harmless. */
export interface TickLease {
  release(): Promise<void>;
}

/**
 * The scheduler's cross-process lock: at most one tick selects and claims due jobs at a time,
 * whichever process (gateway, `agent cron`, `agent chat`) runs it.
 */
export interface TickLock {
  /** Takes the lock without waiting; null when another holder has it. */
  tryAcquire(): Promise<TickLease | null>;
}
