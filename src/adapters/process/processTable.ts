import { readdirSync, readFileSync } from 'node:fs';
import type PsTree from 'ps-tree';

/** One process as the system lists it. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  /**
   * The state letter /proc and ps show: `R` running, `S`/`D` sleeping, `T` stopped, `t` stopped
   * by a tracer, `Z` zombie, `X` dead; `?` when the listing could not tell.
   */
  state: string;
  /** Process group and session; null when the listing does not show them (ps). */
  pgid: number | null;
  sid: number | null;
}

/** Where a tree's processes are looked up, and whether one of them is still there. */
export interface ProcessListing {
  /**
   * The root (when it still exists) and every process that may belong to its tree: all
   * processes of the system for /proc, the root's descendants for ps. Throws when the system
   * cannot be listed.
   */
  list(rootPid: number): Promise<ProcessEntry[]>;
  /** Those of `pids` that exist and are not zombies. */
  aliveAmong(pids: readonly number[]): Promise<number[]>;
}

/** Whether this system has a /proc with a stat file per process (Linux). */
export function hasProcStat(): boolean {
  try {
    return parseProcStat(readFileSync('/proc/self/stat', 'utf8')) !== null;
  } catch {
    return false;
  }
}

/** Reads /proc: every process with its parent, state, group and session, in a few milliseconds. */
export class ProcStatListing implements ProcessListing {
  async list(): Promise<ProcessEntry[]> {
    const entries: ProcessEntry[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const entry = readProcEntry(Number(name));
      if (entry) entries.push(entry);
    }
    return entries;
  }

  async aliveAmong(pids: readonly number[]): Promise<number[]> {
    return pids.filter((pid) => {
      const entry = readProcEntry(pid);
      return entry !== null && entry.state !== 'Z' && entry.state !== 'X';
    });
  }
}

/** One process from /proc, or null when it is gone (or exited between listing and reading). */
export function readProcEntry(pid: number): ProcessEntry | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Parses `/proc/<pid>/stat`: `pid (comm) state ppid pgrp session …`. The command name may hold
 * spaces and parentheses, so the fields after it are found from the last `)`.
 */
export function parseProcStat(text: string): ProcessEntry | null {
  const open = text.indexOf(' (');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const [state, ppid, pgid, sid] = text.slice(close + 2).split(' ');
  const pid = Number(text.slice(0, open));
  if (!state || !Number.isInteger(pid) || [ppid, pgid, sid].some((field) => !/^\d+$/.test(field ?? ''))) return null;
  return { pid, ppid: Number(ppid), state, pgid: Number(pgid), sid: Number(sid) };
}

/**
 * Lists through the `ps-tree` package (`ps -A -o ppid,pid,stat,comm`), for systems without
 * /proc. It shows no groups or sessions, and it finds a child only when ps lists its parent
 * first (by pid), so a child whose pid wrapped around below its parent's is missed.
 */
export class PsTreeListing implements ProcessListing {
  async list(rootPid: number): Promise<ProcessEntry[]> {
    // Usually the root is this process's child: listing from here gives the root's own state.
    const fromHere = await psDescendants(process.pid);
    if (fromHere.some((entry) => entry.pid === rootPid)) return fromHere;
    const below = await psDescendants(rootPid);
    return exists(rootPid) ? [{ pid: rootPid, ppid: 0, state: '?', pgid: null, sid: null }, ...below] : below;
  }

  async aliveAmong(pids: readonly number[]): Promise<number[]> {
    const existing = pids.filter(exists);
    if (existing.length === 0) return [];
    // A zombie still exists; its state tells it apart. Init's descendants are every process but
    // init itself and the kernel's, wherever a member was reparented to. One missing from the
    // list (see the ordering caveat above) counts as alive.
    const states = new Map((await psDescendants(1)).map((entry) => [entry.pid, entry.state]));
    return existing.filter((pid) => states.get(pid) !== 'Z');
  }
}

/** Whether a process with this pid exists (one of another user's included); a zombie exists too. */
export function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function psDescendants(pid: number): Promise<ProcessEntry[]> {
  // Loaded here: only systems without /proc need it.
  const { default: psTree } = await import('ps-tree');
  const rows = await new Promise<readonly PsTree.PS[]>((resolve, reject) =>
    psTree(pid, (error, children) => (error ? reject(error) : resolve(children))),
  );
  return rows.flatMap((row) => {
    const entry = { pid: Number(row.PID), ppid: Number(row.PPID), state: row.STAT.charAt(0) || '?', pgid: null, sid: null };
    return Number.isInteger(entry.pid) && Number.isInteger(entry.ppid) ? [entry] : [];
  });
}
