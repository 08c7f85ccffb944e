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
