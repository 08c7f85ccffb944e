import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, isRunning } from './processLiveness.js';
import { registerCleanup, spawn } from './testProcesses.js';

/** A real process tree for tests: a `/bin/sh -c` root that leads its own session and group. */
export interface StartedTree {
  root: ChildProcess;
  rootPid: number;
  /** Pid of the first process that recorded itself under `label`; throws when none did. */
  pid(label: string): number;
  /** Every pid recorded so far, the root's included. */
  pids(): number[];
}

const hasSetsid = spawnSync('setsid', ['--version']).status === 0;

/**
 * Writes the helper scripts the trees use into `dir`:
 * - `sleeper.sh LABEL` records "pid LABEL" in $PIDS and becomes `sleep 300` (same pid);
 * - without util-linux setsid, `newsession.cjs` plays its part through node's detached spawn.
 */
export function writeTreeScripts(dir: string): void {
  writeFileSync(join(dir, 'sleeper.sh'), 'echo "$$ $1" >> "$PIDS"\nexec sleep 300\n');
  writeFileSync(
    join(dir, 'newsession.cjs'),
    [
      "const { spawn } = require('node:child_process');",
      "const leave = process.argv[2] === '--leave';",
      'const [program, ...args] = process.argv.slice(leave ? 3 : 2);',
      "const child = spawn(program, args, { detached: true, stdio: 'inherit' });",
      'if (leave) { child.unref(); process.exit(0); }',
      "child.on('exit', (code) => process.exit(code ?? 1));",
    ].join('\n'),
  );
}

/**
 * Shell words that run the rest of the line in a new session (setsid). With `parentExits`, the
 * process that called setsid is the one left running, with no parent of the tree above it once
 * the shell that started it has exited.
 */
export function newSession(dir: string, options: { parentExits?: boolean } = {}): string {
  if (hasSetsid) return 'setsid';
  return `"${process.execPath}" "${join(dir, 'newsession.cjs')}"${options.parentExits ? ' --leave' : ''}`;
}

/**
 * Starts `script` under /bin/sh as the service starts its children (detached: own session and
 * group), with $DIR and $PIDS set, and waits until `labels` have all been recorded.
 */
export async function startTree(dir: string, script: string, labels: readonly string[]): Promise<StartedTree> {
  const pidsFile = join(dir, 'pids');
  writeFileSync(pidsFile, '');
  const root = spawn('/bin/sh', ['-c', `echo "$$ root" >> "$PIDS"\n${script}`], {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, DIR: dir, PIDS: pidsFile },
  });
  const recorded = (): Array<[number, string]> =>
    existsSync(pidsFile)
      ? readFileSync(pidsFile, 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => {
            const [pid, label] = line.trim().split(' ');
            return [Number(pid), label ?? ''];
          })
      : [];
  const wanted = ['root', ...labels];
  const ready = await eventually(() => {
    const seen = recorded().map(([, label]) => label);
    return wanted.every((label) => seen.filter((l) => l === label).length >= wanted.filter((w) => w === label).length);
  }, 10_000);
  const tree: StartedTree = {
    root,
    rootPid: root.pid!,
    pid(label) {
      const found = recorded().find(([, l]) => l === label);
      if (!found) throw new Error(`no process recorded itself as "${label}"`);
      return found[0];
    },
    pids: () => recorded().map(([pid]) => pid),
  };
  // What left the root's tree (a new session whose parent exited) is found by its recorded pid,
  // and told from a later process with that pid by the $PIDS it inherited.
  registerCleanup(() => {
    for (const pid of tree.pids()) {
      if (!isRunning(pid) || !environmentOf(pid).includes(`PIDS=${pidsFile}`)) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  });
  if (!ready) {
    killRecorded(tree);
    throw new Error(`the tree did not start in time; recorded: ${JSON.stringify(recorded())}`);
  }
  return tree;
}

/** The environment `pid` runs with (NUL-separated NAME=value), or '' when it cannot be read. */
function environmentOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return '';
  }
}

/** Cleanup after a test: SIGKILLs every recorded process still running. */
export function killRecorded(tree: StartedTree | undefined): void {
  for (const pid of tree?.pids() ?? []) {
    if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  }
}

/** The /proc fields of a process, or null when it is gone. */
export function procStat(pid: number): { state: string; ppid: number; pgid: number; sid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid, pgid, sid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: state!, ppid: Number(ppid), pgid: Number(pgid), sid: Number(sid) };
  } catch {
    return null;
  }
}

/** Whether `ancestor` is reached from `pid` by following parent links. */
export function descendsFrom(pid: number, ancestor: number): boolean {
  for (let current = procStat(pid)?.ppid; current !== undefined && current > 1; current = procStat(current)?.ppid) {
    if (current === ancestor) return true;
  }
  return false;
}

/** Live (non-zombie) processes whose session id is `sid`. */
export function liveSessionMembers(sid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => procStat(pid)?.sid === sid && isRunning(pid));
}

/**
 * The live pids (zombies left out) whose environment holds `name=value`: what one start of a
 * command or gateway left running, grandchildren included, found by a variable they all inherit.
 * `except` leaves out those whose command line contains it (the gateway's launcher).
 */
export function processesMarked(name: string, value: string, except: string | null = null): number[] {
  const entry = `${name}=${value}`;
  const found: number[] = [];
  for (const entryName of readdirSync('/proc')) {
    const pid = Number(entryName);
    if (!Number.isSafeInteger(pid) || pid === process.pid) continue;
    try {
      const environment = readFileSync(`/proc/${entryName}/environ`, 'utf8').split('\0');
      const stat = readFileSync(`/proc/${entryName}/stat`, 'utf8');
      const excepted = except !== null && readFileSync(`/proc/${entryName}/cmdline`, 'utf8').includes(except);
      if (environment.includes(entry) && !excepted && !/\) [ZX] /.test(stat)) found.push(pid);
    } catch {
      // Gone meanwhile, or not ours.
    }
  }
  return found;
}
