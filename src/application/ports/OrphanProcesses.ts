/**
 * Processes a dead process of this service started (agent programs, pre-run scripts, terminal
 * commands, and what they started in turn), which may go on running after it: an orphan that
 * finishes a run the restarted service then repeats would do the work twice.
 */
export interface OrphanProcesses {
  /**
   * From now on, every process this one starts is marked as started by `claimant` (this
   * process's own), so that it can be found once this process is gone.
   */
  markChildrenOf(claimant: string): void;
  /** Kills every process still running that was marked by `claimant` (a process known to be dead); returns how many. Never throws. */
  killOrphansOf(claimant: string): Promise<number>;
  /**
   * Kills every process still running that was marked by a claimant for which `isDead` says
   * true (asked once per claimant found; this process's own mark is never asked about): what
   * every dead process of this service left running on this host, whoever it was. Returns how
   * many were killed, by claimant. Never throws.
   */
  killOrphansOfTheDead(isDead: (claimant: string) => boolean): Promise<Map<string, number>>;
}
