import { hostname } from 'node:os';
import { injectable } from 'inversify';
import { readProcEntry } from '../process/processTable.js';
import type { ProcessIdentity } from '../../application/ports/ProcessIdentity.js';

/** `<host>:<pid>`; the host is everything before the last colon. */
const CLAIMANT = /^(.+):([1-9][0-9]*)$/;

/** This process as `<os.hostname()>:<pid>`, and liveness checks by signal 0 for this host. */
@injectable()
export class HostProcessIdentity implements ProcessIdentity {
  private readonly host = hostname();

  /** `<host>:<pid>` of this process; the same for the life of the process. */
  claimant(): string {
    return `${this.host}:${process.pid}`;
  }

  /**
   * For a claimant on this host: whether a process with its pid exists and has not exited (a
   * zombie is dead; a recycled pid reads as alive, which errs towards leaving a job alone). 'unknown' for another host, a malformed
   * claimant, or a check the system refuses for another reason.
   */
  isAlive(claimant: string): boolean | 'unknown' {
    const match = CLAIMANT.exec(claimant);
    if (!match) return 'unknown';
    const [, host, pidText] = match;
    // Host names are case-insensitive.
    if (host?.toLowerCase() !== this.host.toLowerCase()) return 'unknown';
    const pid = Number(pidText);
    if (!Number.isSafeInteger(pid)) return 'unknown';
    try {
      // Signal 0 checks that the process exists without touching it.
      process.kill(pid, 0);
      return !isZombie(pid);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ESRCH') return false;
      // It exists but belongs to another user.
      if (code === 'EPERM') return true;
      return 'unknown';
    }
  }
}

/**
 * A process that has exited and waits for its parent to collect it (state Z, or X while it is
 * being removed) still answers signal 0, but is dead. Read from /proc where there is one.
 */
function isZombie(pid: number): boolean {
  const state = readProcEntry(pid)?.state;
  return state === 'Z' || state === 'X';
}
