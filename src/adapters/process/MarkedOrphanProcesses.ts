import { injectable } from 'inversify';
import type { OrphanProcesses } from '../../application/ports/OrphanProcesses.js';
import { processesMarked, processesSetting } from './markedProcesses.js';

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
    for (const pid of await processesMarked(OWNER_VARIABLE, claimant, this.proc)) if (kill(pid)) killed += 1;
    return killed;
  }

  /**
   * One read of /proc finds every mark; a claimant is judged once. A process marked by this one
   * (its own children) is never among them, nor one whose mark another process set later: a
   * process of this service started by a dead one carries its own mark from then on.
   */
  async killOrphansOfTheDead(isDead: (claimant: string) => boolean): Promise<Map<string, number>> {
    const own = process.env[OWNER_VARIABLE];
    const killed = new Map<string, number>();
    const dead = new Map<string, boolean>();
    try {
      for (const { pid, value } of await processesSetting(OWNER_VARIABLE, this.proc)) {
        if (value === own || value === '') continue;
        let gone = dead.get(value);
        if (gone === undefined) {
          gone = isDead(value);
          dead.set(value, gone);
        }
        if (gone && kill(pid)) killed.set(value, (killed.get(value) ?? 0) + 1);
      }
    } catch {
      // Never throws: what could not be looked at is left as it is.
    }
    return killed;
  }
}

/** SIGKILL to `pid`; false when it was gone already. */
function kill(pid: number): boolean {
  try {
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}
