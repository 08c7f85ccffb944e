import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';

/**
 * The variable that marks every process one child run started: ChildProcessRunner gives each
 * child its own value, inherited by everything the child starts, so that a stop can find those
 * that left the tree (a grandchild whose parent exited is adopted by init and has no parent link
 * to the child any more).
 */
export const TREE_MARK_VARIABLE = 'AGENT_PROCESS_TREE';

/** A mark no other run carries. */
export function newTreeMark(): string {
  return `${process.pid}-${randomBytes(6).toString('hex')}`;
}

/**
 * The pids, this process and init aside, whose environment holds `name=value`, read from /proc
 * (Linux). Empty where there is no /proc; a process whose environment cannot be read (another
 * user's, or one that just ended) is not ours and is left out.
 */
export async function processesMarked(name: string, value: string, proc = '/proc'): Promise<number[]> {
  const entry = Buffer.from(`${name}=${value}\0`);
  let names: string[];
  try {
    names = await readdir(proc);
  } catch {
    return [];
  }
  const marked: number[] = [];
  for (const each of names) {
    const pid = Number(each);
    if (!Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid) continue;
    const environment = await readFile(`${proc}/${each}/environ`).catch(() => null);
    if (environment !== null && holdsEntry(environment, entry)) marked.push(pid);
  }
  return marked;
}

/** Whether the NUL-separated environment holds `entry` (which ends in its NUL). */
function holdsEntry(environment: Buffer, entry: Buffer): boolean {
  if (environment.subarray(0, entry.length).equals(entry)) return true;
  return environment.includes(Buffer.concat([Buffer.from('\0'), entry]));
}

/**
 * The pids, this process and init aside, whose environment sets `name`, with the value each
 * sets it to, read from /proc (Linux) as processesMarked does.
 */
export async function processesSetting(name: string, proc = '/proc'): Promise<Array<{ pid: number; value: string }>> {
  const prefix = Buffer.from(`${name}=`);
  let names: string[];
  try {
    names = await readdir(proc);
  } catch {
    return [];
  }
  const found: Array<{ pid: number; value: string }> = [];
  for (const each of names) {
    const pid = Number(each);
    if (!Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid) continue;
    const environment = await readFile(`${proc}/${each}/environ`).catch(() => null);
    if (environment === null) continue;
    const value = valueIn(environment, prefix);
    if (value !== null) found.push({ pid, value });
  }
  return found;
}

/** The value the NUL-separated environment gives the variable of `prefix` (`NAME=`); null when it sets none. */
function valueIn(environment: Buffer, prefix: Buffer): string | null {
  let start = environment.subarray(0, prefix.length).equals(prefix) ? 0 : -1;
  if (start < 0) {
    const at = environment.indexOf(Buffer.concat([Buffer.from('\0'), prefix]));
    if (at < 0) return null;
    start = at + 1;
  }
  const end = environment.indexOf(0, start);
  return environment.subarray(start + prefix.length, end < 0 ? environment.length : end).toString('utf8');
}
