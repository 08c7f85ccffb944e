// ps-tree ships no types; this covers the one call processTable.ts makes.
declare module 'ps-tree' {
  namespace psTree {
    /** One row of `ps -A -o ppid,pid,stat,comm`, every column as text. */
    interface PS {
      PPID: string;
      PID: string;
      STAT: string;
      COMMAND: string;
    }
  }
  /** Calls back with every descendant of `pid` (not `pid` itself). */
  function psTree(pid: number | string, callback: (error: Error | null, children: readonly psTree.PS[]) => void): void;
  export = psTree;
}
