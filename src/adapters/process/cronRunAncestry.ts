import { readFileSync } from 'node:fs';
import { CRON_RUN_VARIABLE } from '../../domain/cronRunGuard.js';
import { isSandboxCommandLine } from '../../domain/sandboxPlan.js';

/** How far up the parent chain is looked: deeper than any shell, wrapper and agent program nest. */
const MOST_ANCESTORS = 64;

/**
 * The job id a cron run gave one of this process's ancestors (`AGENT_CRON_RUN` in the environment
 * that ancestor was started with), or null: how a command knows it descends from a cron run when
 * its own environment no longer says so (`env -u AGENT_CRON_RUN agent cron create …`). An
 * ancestor's starting environment, read from `/proc/<pid>/environ`, cannot be changed by its
 * descendants. Where /proc cannot be read (another system, another user's process), that
 * ancestor is passed over. In the agent's sandbox the first process is the sandbox itself, started
 * with the run's environment, and is looked at too. Linux only; elsewhere null.
 */
export function cronRunAmongAncestors(firstParent: number = process.ppid, proc = '/proc'): string | null {
  const entry = `${CRON_RUN_VARIABLE}=`;
  const last = insideAgentSandbox(proc) ? 1 : 2;
  let pid = firstParent;
  for (let step = 0; step < MOST_ANCESTORS && pid >= last; step += 1) {
    const environment = readOrNull(`${proc}/${pid}/environ`);
    const found = environment?.split('\0').find((line) => line.startsWith(entry) && line.length > entry.length);
    if (found) return found.slice(entry.length);
    const parent = parentOf(pid, proc);
    if (parent === null) return null;
    pid = parent;
  }
  return null;
}

/**
 * Whether this process runs in the sandbox the agent gives its children (docs/processes.md): the
 * first process of its PID namespace is bubblewrap started with the agent's mark, and nothing in
 * the sandbox can change that process's command line.
 */
export function insideAgentSandbox(proc = '/proc'): boolean {
  const cmdline = readOrNull(`${proc}/1/cmdline`);
  return cmdline !== null && isSandboxCommandLine(cmdline);
}

/** The parent's pid from `/proc/<pid>/stat` (the field after the state, past the parenthesised name). */
function parentOf(pid: number, proc: string): number | null {
  const stat = readOrNull(`${proc}/${pid}/stat`);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const parent = Number(fields[1]);
  return Number.isSafeInteger(parent) ? parent : null;
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
