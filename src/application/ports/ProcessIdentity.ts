/** Who this process is, and whether another claimant is still alive. */
export interface ProcessIdentity {
  /** `<host>:<pid>` of this process, written into the claims it makes. */
  claimant(): string;
  /**
   * Whether the process named by a claimant string is alive: true or false when it is on this
   * host and can be checked, 'unknown' for another host or an unreadable claimant.
   */
  isAlive(claimant: string): boolean | 'unknown';
}
