import { readdir, readFile } from 'node:fs/promises';
import { injectable } from 'inversify';
import type { OrphanProcesses } from '../../application/ports/OrphanProcesses.js';

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
    const mark = Buffer.from(`${OWNER_VARIABLE}=${claimant}\0`);
    let names: string[];
    try {
      names = await readdir(this.proc);
    } catch {
      return 0;
    }
    let killed = 0;
    for (const name of names) {
      const pid = Number(name);
      if (!Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid) continue;
      // Another user's process, or one that ended meanwhile: unreadable, and not ours to kill.
      const environment = await readFile(`${this.proc}/${name}/environ`).catch(() => null);
      if (environment === null || !startsWithOrContains(environment, mark)) continue;
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

/** Whether the NUL-separated environment holds the entry `mark` (which ends in its NUL). */
function startsWithOrContains(environment: Buffer, mark: Buffer): boolean {
  if (environment.subarray(0, mark.length).equals(mark)) return true;
  const inner = Buffer.concat([Buffer.from('\0'), mark]);
  return environment.includes(inner);
}
