import { injectable } from 'inversify';
import type { OrphanProcesses } from '../../application/ports/OrphanProcesses.js';
import { processesMarked } from './markedProcesses.js';

/** The variable that marks a process as started (directly or not) by a process of this service. */
export const OWNER_VARIABLE = 'AGENT_OWNER_PROCESS';

/**
 * Orphans found by their environment: this process puts `AGENT_OWNER_PROCESS=<claimant>` into its
 * own environment, which every child inherits (the spawners pass this process's environment on)
 * and hands on to its own children, including those that start a session of their own. Once the
 * claimant is dead, every process still carrying its mark is one it started, whatever became of
 * the parent links, and a pid the system gave out again cannot carry the mark.
 *
 * The environments are read from /proc (Linux); where there is none, no orphan is found, and an
 * orphan of a killed gateway may finish its run (docs/webhooks.md says so).
 */
@injectable()
export class MarkedOrphanProcesses implements OrphanProcesses {
  constructor(private readonly proc = '/proc') {}

  markChildrenOf(claimant: string): void {
    process.env[OWNER_VARIABLE] = claimant;
  }

  async killOrphansOf(claimant: string): Promise<number> {
    let killed = 0;
    for (const pid of await processesMarked(OWNER_VARIABLE, claimant, this.proc)) {
      try {
        process.kill(pid, 'SIGKILL');
        killed += 1;
      } catch {
        // Gone already.
      }
    }
    return killed;
  }
}
