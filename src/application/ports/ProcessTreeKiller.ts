/**
 * Ends a process together with everything it started (docs/processes.md).
 * ChildProcessRunner starts every child as the leader of its own session and process group
 * (`detached: true`) and calls `killTree` on a timeout, an idle timeout or cancellation.
 *
 * Implementations: PosixProcessTreeKiller (stop the live tree, rescan, kill) and
 * WindowsProcessTreeKiller (taskkill /T /F); the composition root picks one by platform.
 */
export interface ProcessTreeKiller {
  /**
   * Hard-kills the tree rooted at `rootPid` and resolves once it is gone or a bounded wait has
   * passed; the report says which members survived and whether only best-effort cleanup was
   * possible. Never throws. A root that is this process or contains it is refused.
   *
   * With `mark` (the value the runner gave the child's `AGENT_PROCESS_TREE`), also every process
   * still carrying it: those that left the tree, such as a grandchild adopted by init after its
   * parent exited. Found where the system shows environments (/proc); elsewhere only the tree.
   */
  killTree(rootPid: number, mark?: string): Promise<TreeKillReport>;
  /**
   * Asks every member of the tree to end with `signal`; suspends no one and waits for no one.
   * Never throws.
   */
  signalTree(rootPid: number, signal: GracefulSignal): Promise<TreeSignalReport>;
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
