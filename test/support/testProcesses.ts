import { execFile as execFileUnregistered, spawn as spawnUnregistered, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
// Real time even where a test fakes the global timers (jest.useFakeTimers).
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

/**
 * The one registry of processes that tests start. Everything a test starts goes through `spawn`
 * or `execFile` here (or is handed to `registerProcess` / `registerPid`), and the test
 * environment (testProcessesEnvironment.cjs, set in jest.config.js) kills what is left once the
 * hooks have run, whether the test passed or failed:
 *
 * - what was registered during a test (its `beforeEach` and `afterEach` hooks included) when
 *   that test ends;
 * - what was registered outside any test (`beforeAll`, `afterAll`, a describe's body) when the
 *   file ends, so that a gateway started in `beforeAll` serves every test of its describe.
 *
 * Killing is SIGKILL of the process, of every process descended from it (found through /proc,
 * stopped first so that none forks away meanwhile), and of its process group when it leads one;
 * its pipes are then closed, so that nothing a failed test left keeps Jest from exiting. Other
 * cleanups (a private PostgreSQL server) register with `registerCleanup`.
 */

type Scope = 'test' | 'file';

interface Entry {
  scope: Scope;
  kill: () => Promise<void>;
}

/** Shared with testProcessesEnvironment.cjs, which makes it and moves `scope`; this module adds `kill`. */
interface Registry {
  /** 'test' from a test's start to its end (its beforeEach and afterEach hooks included), 'file' otherwise. */
  scope: Scope;
  entries: Set<Entry>;
  /** Kills what `scope` registered: a test's at its end, everything at the file's end. */
  kill?: (scope: Scope) => Promise<void>;
}

// On the test file's global, under a key the environment knows: the environment runs outside the
// test's module realm and cannot import this module.
const KEY = Symbol.for('agent.test.processes');
function registry(): Registry {
  const global = globalThis as unknown as Record<symbol, Registry | undefined>;
  const own = (global[KEY] ??= { scope: 'file', entries: new Set() });
  own.kill ??= killRegistered;
  return own;
}

/** Kills what `scope` registered (the environment calls it through the registry). */
async function killRegistered(scope: Scope): Promise<void> {
  const own = registry();
  const due = [...own.entries].filter((entry) => scope === 'file' || entry.scope === 'test');
  for (const entry of due) own.entries.delete(entry);
  await Promise.all(due.map((entry) => entry.kill().catch(() => undefined)));
}

/** How long a kill waits for a child to be reaped before closing its pipes anyway. */
const REAP_WAIT_MS = 5_000;

/**
 * The parent, the process group and the start time (in clock ticks after boot) of `pid`, or null
 * when there is no such process. Pids are reused (this machine may count only to 32768): the
 * start time tells a process from a later one with its pid.
 */
function statOf(pid: number): { ppid: number; pgid: number; started: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // After the name: state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt, majflt,
    // cmajflt, utime, stime, cutime, cstime, priority, nice, num_threads, itrealvalue, starttime.
    return { ppid: Number(fields[1]), pgid: Number(fields[2]), started: fields[19]! };
  } catch {
    return null;
  }
}

/** SIGKILLs what is left of the group `pgid` once its leader is gone, unless the pid now leads a group of someone else's. */
function killLeaderlessGroup(pgid: number): void {
  // The kernel gives no new process a pid still used as a group id; a new process with it leads another group.
  if (statOf(pgid)?.pgid === pgid) return;
  signal(-pgid, 'SIGKILL');
}

/** Every running process descended from one of `roots` (not the roots). Empty where there is no /proc. */
function descendantsOf(roots: ReadonlySet<number>): Set<number> {
  const children = new Map<number, number[]>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return new Set();
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const stat = statOf(Number(name));
    if (stat === null) continue;
    const siblings = children.get(stat.ppid) ?? [];
    siblings.push(Number(name));
    children.set(stat.ppid, siblings);
  }
  const found = new Set<number>();
  const queue = [...roots];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (found.has(child) || roots.has(child)) continue;
      found.add(child);
      queue.push(child);
    }
  }
  return found;
}

function signal(target: number, name: NodeJS.Signals): void {
  if (target === process.pid || target === -process.pid || target === 0) return;
  try {
    process.kill(target, name);
  } catch {
    // Gone already, or never ours.
  }
}

/**
 * SIGKILLs `pid`, everything descended from it, and the group it leads (`leadsGroup`). The tree
 * is stopped first and looked at again until it stops growing, then killed, so that no process
 * forks away between the look and the kill.
 */
function killTree(pid: number, leadsGroup: boolean): void {
  const tree = new Set<number>([pid]);
  if (statOf(pid) !== null) {
    for (let round = 0; round < 5; round += 1) {
      const before = tree.size;
      for (const member of tree) signal(member, 'SIGSTOP');
      for (const member of descendantsOf(tree)) tree.add(member);
      if (tree.size === before) break;
    }
  }
  if (leadsGroup) signal(-pid, 'SIGKILL');
  for (const member of tree) signal(member, 'SIGKILL');
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Registers `child` to be killed (with its descendants and, when it leads one, its process
 * group) when the current test ends, or when the file ends if it was started outside a test.
 * Returns it.
 */
export function registerProcess<T extends ChildProcess>(child: T): T {
  const pid = child.pid;
  if (pid === undefined) return child; // It failed to start ('error' follows): nothing to kill.
  // spawn returns once the child has exec'd, so a detached child already leads its group.
  const leadsGroup = statOf(pid)?.pgid === pid;
  const own = registry();
  // Kept after the child exits: a descendant may still hold its pipes, or its group.
  own.entries.add({
    scope: own.scope,
    kill: async () => {
      if (!exited(child)) {
        killTree(pid, leadsGroup);
        const reaped = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        // Unreferenced: the timer left pending once the child is reaped must not keep Jest waiting.
        await Promise.race([reaped, sleep(REAP_WAIT_MS, undefined, { ref: false })]);
      } else if (leadsGroup) {
        // The leader is gone; what it left in its group is not.
        killLeaderlessGroup(pid);
      }
      // A grandchild that kept a pipe open would keep Jest waiting on it.
      for (const stream of child.stdio) stream?.destroy();
    },
  });
  return child;
}

/**
 * Registers a process the test did not start itself but must not outlive it (a pid a child
 * reported): SIGKILLed with its descendants when the scope ends, unless it is gone by then (a
 * later process with its pid is left alone).
 */
export function registerPid(pid: number): void {
  const started = statOf(pid)?.started;
  if (started === undefined) return;
  const own = registry();
  own.entries.add({
    scope: own.scope,
    kill: async () => {
      const now = statOf(pid);
      if (now?.started === started) killTree(pid, now.pgid === pid);
    },
  });
}

/** Runs `cleanup` when the scope ends, as a process registered now would be killed. Returns a function that cancels it. */
export function registerCleanup(cleanup: () => Promise<void> | void): () => void {
  const own = registry();
  const entry: Entry = { scope: own.scope, kill: async () => void (await cleanup()) };
  own.entries.add(entry);
  return () => own.entries.delete(entry);
}

/** `child_process.spawn`, registered: same arguments, same result. */
export const spawn = ((...args: Parameters<typeof spawnUnregistered>) =>
  registerProcess(spawnUnregistered(...args))) as typeof spawnUnregistered;

/**
 * `child_process.execFile`, registered: same arguments, same result, and `promisify(execFile)`
 * resolves with `{ stdout, stderr }` as the original's does.
 */
export const execFile = ((...args: Parameters<typeof execFileUnregistered>) =>
  registerProcess(execFileUnregistered(...args))) as typeof execFileUnregistered;
const promisifiedExecFile = (
  execFileUnregistered as unknown as Record<symbol, (...args: unknown[]) => Promise<unknown> & { child: ChildProcess }>
)[promisify.custom]!;
Object.defineProperty(execFile, promisify.custom, {
  value: (...args: unknown[]) => {
    const running = promisifiedExecFile(...args);
    registerProcess(running.child);
    return running;
  },
});
