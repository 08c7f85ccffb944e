import type { Logger } from '../../application/ports/Logger.js';
import type { GracefulSignal, ProcessTreeKiller, TreeKillReport, TreeSignalReport } from '../../application/ports/ProcessTreeKiller.js';
import { processesMarked, TREE_MARK_VARIABLE } from './markedProcesses.js';
import { hasProcStat, ProcStatListing, PsTreeListing, type ProcessEntry, type ProcessListing } from './processTable.js';

/** Sends one signal (0 only probes); throws like `process.kill` (ESRCH, EPERM). */
export type SendSignal = (pid: number, signal: NodeJS.Signals | 0) => void;

export interface PosixTreeKillOptions {
  /** Where best-effort cleanups are reported. */
  logger?: Logger | null;
  /** Default: /proc when this system has it, else the `ps-tree` package. */
  listing?: ProcessListing;
  /** Default: `process.kill`. Tests replace it to make a signal fail. */
  sendSignal?: SendSignal;
  /** Bounds of the stop-and-rescan phase: at most this many listings … */
  maxStopRounds?: number;
  /** … and at most this long. */
  stopBudgetMs?: number;
  /** How long killed members may take to disappear before they count as survivors. */
  exitWaitMs?: number;
}

const DEFAULT_MAX_STOP_ROUNDS = 20;
const DEFAULT_STOP_BUDGET_MS = 500;
const DEFAULT_EXIT_WAIT_MS = 1000;
const POLL_MS = 5;

type Delivery = 'sent' | 'gone' | 'refused';

/**
 * The process-tree killer on Linux, macOS and the BSDs (docs/processes.md).
 *
 * `killTree` lists the processes, takes the root, its descendants through parent links (so
 * children that called setsid are found too) and, when the root was alive at the first listing,
 * every member of the session and process group numbered like the root — which only its
 * descendants can have joined, so daemons of the tree that were reparented to init but stayed in
 * them are found as well. It SIGSTOPs each member as it is found and lists again until a listing
 * finds nobody new and every member it stopped shows as stopped (bounded in rounds and time),
 * then SIGKILLs the descendants, the root and the root's process group. A member still running
 * after a bounded wait, or one that refused the signal, makes the kill a failure: every member
 * this cleanup stopped is continued again, while members that were stopped before keep their
 * state. A listing or permission failure falls back to killing the root's process group and is
 * logged as best-effort.
 *
 * `signalTree` delivers a graceful signal to the same members and never stops anyone.
 */
export class PosixProcessTreeKiller implements ProcessTreeKiller {
  private readonly logger: Logger | null;
  private readonly listing: ProcessListing;
  private readonly sendSignal: SendSignal;
  private readonly maxStopRounds: number;
  private readonly stopBudgetMs: number;
  private readonly exitWaitMs: number;

  constructor(options: PosixTreeKillOptions = {}) {
    this.logger = options.logger ?? null;
    this.listing = options.listing ?? (hasProcStat() ? new ProcStatListing() : new PsTreeListing());
    this.sendSignal = options.sendSignal ?? ((pid, signal) => process.kill(pid, signal));
    this.maxStopRounds = options.maxStopRounds ?? DEFAULT_MAX_STOP_ROUNDS;
    this.stopBudgetMs = options.stopBudgetMs ?? DEFAULT_STOP_BUDGET_MS;
    this.exitWaitMs = options.exitWaitMs ?? DEFAULT_EXIT_WAIT_MS;
  }

  /**
   * Stops, then SIGKILLs the tree rooted at `rootPid` and waits (bounded) until it is gone.
   * Resolves with what happened; never throws. A root that is this process or one of its
   * ancestors is refused: nothing is signalled and it is reported as a survivor.
   */
  async killTree(rootPid: number, mark?: string): Promise<TreeKillReport> {
    const report = await this.killLiveTree(rootPid);
    if (mark === undefined || !isChildPid(rootPid) || report.survivors.includes(rootPid)) return report;
    const strays: number[] = [];
    for (const pid of await processesMarked(TREE_MARK_VARIABLE, mark)) {
      if (this.deliver(pid, 'SIGKILL') === 'sent') strays.push(pid);
    }
    if (strays.length > 0) this.logger?.debug(`Killed ${strays.join(', ')}, which had left process tree ${rootPid}.`);
    return { ...report, killed: ascending([...report.killed, ...strays]) };
  }

  private async killLiveTree(rootPid: number): Promise<TreeKillReport> {
    if (!isChildPid(rootPid)) return this.refuseRoot(rootPid);
    const first = await this.tryList(rootPid);
    if (first === null) return this.killGroupInstead(rootPid, 'the process list could not be read');
    if (!first.some((entry) => entry.pid === rootPid && !isZombie(entry))) {
      // The root has exited, so nobody can be found through it; its group may still have members.
      this.deliver(-rootPid, 'SIGKILL');
      return { rootPid, killed: [], survivors: [], fallback: false };
    }
    if (treeMembers(rootPid, first).has(process.pid)) return this.refuseRoot(rootPid);
    const ledGroup = this.deliver(-rootPid, 0) === 'sent';

    const tree = await this.stopTree(rootPid, first);
    for (const pid of tree.members.keys()) {
      if (pid !== rootPid) this.noteRefusal(tree, pid, this.deliver(pid, 'SIGKILL'));
    }
    this.noteRefusal(tree, rootPid, this.deliver(rootPid, 'SIGKILL'));
    if (ledGroup) this.noteRefusal(tree, -rootPid, this.deliver(-rootPid, 'SIGKILL'));
    const survivors = await this.awaitGone(rootPid, tree);

    if (survivors.length > 0) {
      for (const pid of await this.listing.aliveAmong([...tree.stoppedByCleanup])) this.deliver(pid, 'SIGCONT');
    }
    const fallback = tree.refused.size > 0 || tree.listingFailed;
    const report: TreeKillReport = {
      rootPid,
      killed: ascending([...tree.members.keys()].filter((pid) => !survivors.includes(pid))),
      survivors,
      fallback,
    };
    if (fallback || survivors.length > 0) {
      this.logger?.warn(
        `Cleanup of process tree ${rootPid} was best-effort: ` +
          [
            survivors.length > 0 ? `${survivors.join(', ')} still running, and the members this cleanup stopped were continued` : '',
            tree.refused.size > 0 ? 'some processes refused the signal (not ours)' : '',
            tree.listingFailed ? 'the process list could not be read again' : '',
          ]
            .filter(Boolean)
            .join('; ') +
          '.',
        { ...report },
      );
    } else {
      this.logger?.debug(`Killed process tree ${rootPid}.`, { ...report });
    }
    return report;
  }

  /**
   * Delivers `signal` to every member of the tree rooted at `rootPid`, descendants first, without
   * stopping anyone. Falls back to the root's process group when the processes cannot be listed.
   * Never throws.
   */
  async signalTree(rootPid: number, signal: GracefulSignal): Promise<TreeSignalReport> {
    if (!isChildPid(rootPid)) {
      this.logger?.warn(`Refused to signal process tree ${rootPid}: it is not a process this service started.`);
      return { rootPid, signalled: [], refused: [rootPid], fallback: false };
    }
    const entries = await this.tryList(rootPid);
    if (entries === null) {
      this.logger?.warn(`Signalling process tree ${rootPid} was best-effort: the process list could not be read.`);
      this.deliver(-rootPid, signal);
      return { rootPid, signalled: this.deliver(rootPid, signal) === 'sent' ? [rootPid] : [], refused: [], fallback: true };
    }
    const members = treeMembers(rootPid, entries);
    if (members.has(process.pid)) {
      this.logger?.warn(`Refused to signal process tree ${rootPid}: this service is part of it.`);
      return { rootPid, signalled: [], refused: [rootPid], fallback: false };
    }
    const signalled: number[] = [];
    const refused: number[] = [];
    for (const pid of [...[...members.keys()].filter((pid) => pid !== rootPid), rootPid]) {
      const delivery = this.deliver(pid, signal);
      if (delivery === 'sent') signalled.push(pid);
      if (delivery === 'refused') refused.push(pid);
    }
    if (refused.length > 0) {
      this.logger?.warn(`Signalling process tree ${rootPid} was best-effort: ${refused.join(', ')} refused ${signal}.`);
    }
    return { rootPid, signalled: ascending(signalled), refused: ascending(refused), fallback: false };
  }

  /**
   * SIGSTOPs every member as it is found and lists again, until a listing finds nobody new and
   * every member stopped here shows as stopped, or the rounds or the time run out.
   */
  private async stopTree(rootPid: number, first: readonly ProcessEntry[]): Promise<StoppedTree> {
    const tree: StoppedTree = { members: new Map(), stoppedByCleanup: new Set(), refused: new Set(), listingFailed: false };
    const deadline = performance.now() + this.stopBudgetMs;
    let entries = first;
    for (let round = 1; ; round += 1) {
      let found = 0;
      for (const [pid, entry] of treeMembers(rootPid, entries, tree.members.keys())) {
        if (tree.members.has(pid)) continue;
        found += 1;
        tree.members.set(pid, entry);
        if (isStopped(entry)) continue;
        const delivery = this.deliver(pid, 'SIGSTOP');
        if (delivery === 'sent') tree.stoppedByCleanup.add(pid);
        this.noteRefusal(tree, pid, delivery);
      }
      const settled = found === 0 && [...tree.stoppedByCleanup].every((pid) => showsStopped(entries, pid));
      if (settled || round >= this.maxStopRounds || performance.now() >= deadline) return tree;
      // Nobody new, but a stop has not landed yet: give it a moment before looking again.
      if (found === 0) await pause(1);
      const next = await this.tryList(rootPid);
      if (next === null) {
        tree.listingFailed = true;
        return tree;
      }
      entries = next;
    }
  }

  /**
   * Waits until every member is gone, SIGKILLing any newcomer of the root's session or group
   * (a fork that was under way when its parent stopped). Returns the members still running.
   */
  private async awaitGone(rootPid: number, tree: StoppedTree): Promise<number[]> {
    const deadline = performance.now() + this.exitWaitMs;
    for (;;) {
      const entries = await this.tryList(rootPid);
      for (const entry of entries ?? []) {
        if (isZombie(entry) || tree.members.has(entry.pid) || entry.pid === process.pid) continue;
        if (entry.sid !== rootPid && entry.pgid !== rootPid) continue;
        tree.members.set(entry.pid, entry);
        this.noteRefusal(tree, entry.pid, this.deliver(entry.pid, 'SIGKILL'));
      }
      const running = ascending(await this.listing.aliveAmong([...tree.members.keys()]));
      // A member that refused SIGKILL will not go by waiting.
      const waiting = running.filter((pid) => !tree.refused.has(pid));
      if (waiting.length === 0 || performance.now() >= deadline) return running;
      await pause(POLL_MS);
    }
  }

  private killGroupInstead(rootPid: number, why: string): TreeKillReport {
    this.deliver(-rootPid, 'SIGKILL');
    const root = this.deliver(rootPid, 'SIGKILL');
    this.logger?.warn(`Cleanup of process tree ${rootPid} was best-effort: ${why}, so only its process group was killed.`);
    return { rootPid, killed: root === 'sent' ? [rootPid] : [], survivors: root === 'refused' ? [rootPid] : [], fallback: true };
  }

  private refuseRoot(rootPid: number): TreeKillReport {
    this.logger?.warn(`Refused to kill process tree ${rootPid}: this service is part of it, or it is not a process it started.`);
    return { rootPid, killed: [], survivors: [rootPid], fallback: false };
  }

  private async tryList(rootPid: number): Promise<ProcessEntry[] | null> {
    try {
      return await this.listing.list(rootPid);
    } catch {
      return null;
    }
  }

  private noteRefusal(tree: StoppedTree, pid: number, delivery: Delivery): void {
    if (delivery === 'refused') tree.refused.add(pid);
  }

  private deliver(pid: number, signal: NodeJS.Signals | 0): Delivery {
    try {
      this.sendSignal(pid, signal);
      return 'sent';
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ESRCH' ? 'gone' : 'refused';
    }
  }
}

interface StoppedTree {
  /** Every member found, with its entry when first seen: its state before cleanup. */
  members: Map<number, ProcessEntry>;
  /** Members this cleanup SIGSTOPped; the only ones it may continue. */
  stoppedByCleanup: Set<number>;
  /** Pids (negative: a group) that refused a signal. */
  refused: Set<number>;
  /** A listing after the first failed. */
  listingFailed: boolean;
}

/**
 * The live members of the tree rooted at `rootPid` among `entries`: the root, every process that
 * descends through parent links from it or from a `known` member, and every process of the
 * session or process group numbered `rootPid` (a number is not reused while a session or group
 * holds it, so while the root lives only its descendants can be in them). Zombies are left out.
 * Call it only for a root that was alive when first listed.
 */
export function treeMembers(rootPid: number, entries: readonly ProcessEntry[], known: Iterable<number> = []): Map<number, ProcessEntry> {
  const live = new Map<number, ProcessEntry>();
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (isZombie(entry)) continue;
    live.set(entry.pid, entry);
    children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry.pid]);
  }
  const sameSessionOrGroup = [...live.values()].filter((entry) => entry.sid === rootPid || entry.pgid === rootPid);
  const queue = [rootPid, ...known, ...sameSessionOrGroup.map((entry) => entry.pid)];
  const members = new Map<number, ProcessEntry>();
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    const entry = live.get(pid);
    if (!entry || members.has(pid) || pid <= 1) continue;
    members.set(pid, entry);
    queue.push(...(children.get(pid) ?? []));
  }
  return members;
}

function isChildPid(pid: number): boolean {
  return Number.isInteger(pid) && pid > 1 && pid !== process.pid && pid !== process.ppid;
}

function isZombie(entry: ProcessEntry): boolean {
  return entry.state === 'Z' || entry.state === 'X';
}

function isStopped(entry: ProcessEntry): boolean {
  return entry.state === 'T' || entry.state === 't';
}

function showsStopped(entries: readonly ProcessEntry[], pid: number): boolean {
  const entry = entries.find((candidate) => candidate.pid === pid);
  return entry === undefined || isStopped(entry) || isZombie(entry);
}

function ascending(pids: number[]): number[] {
  return [...new Set(pids)].sort((a, b) => a - b);
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
