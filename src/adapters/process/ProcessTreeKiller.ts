/**
 * Hard-kills a process together with everything it started. Runners and the script executor
 * start their child as the leader of its own process group (`detached: true`) and call this on
 * timeout or cancellation.
 *
 * This is the seam for spec rule 10: a later implementation stops the live tree, rescans it and
 * signals descendants in other sessions too. Until then ProcessGroupKiller covers every
 * descendant that stayed in the child's process group.
 */
export interface ProcessTreeKiller {
  /** Sends SIGKILL to the tree rooted at `rootPid`; resolves once signalled. Never throws. */
  killTree(rootPid: number): Promise<void>;
}

/** What a hard kill of a tree did, for logs and tests. Pids ascending. */
export interface TreeKillReport {
  rootPid: number;
  /** Members of the tree that were signalled and are gone afterwards. */
  killed: number[];
  /** Members still running after SIGKILL and a bounded wait, or that refused the signal. */
  survivors: number[];
  /** Discovery or a permission failed, so only best-effort process-group cleanup was possible. */
  fallback: boolean;
}

/** Signals that ask a process to end; none of them suspends it. */
export type GracefulSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';

/** What a graceful signal to a tree did. Pids ascending. */
export interface TreeSignalReport {
  rootPid: number;
  /** Members the signal was delivered to. */
  signalled: number[];
  /** Members that refused it (not ours to signal). */
  refused: number[];
  /** Discovery failed, so the signal went to the root's process group instead. */
  fallback: boolean;
}

/** Kills the process group led by the root, then the root itself in case it left the group. */
export class ProcessGroupKiller implements ProcessTreeKiller {
  async killTree(rootPid: number): Promise<void> {
    if (process.platform !== 'win32') signal(-rootPid);
    signal(rootPid);
  }
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone (ESRCH) or not ours (EPERM): either way there is nothing more this can do.
  }
}
