/**
 * What a sandboxed child may see, and the bubblewrap arguments that give it exactly that
 * (docs/processes.md, "The sandbox"). Pure: the adapter finds the paths and runs bwrap.
 */

/** `tools.sandbox`: `auto` uses bubblewrap where it works, `bwrap` insists on it, `off` never uses it. */
export const SANDBOX_MODES = ['auto', 'bwrap', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/**
 * Set in every sandboxed child, and the mark the agent's own commands look for in the sandbox's
 * first process (`/proc/1/cmdline`, which nothing inside can change) to know they run in one.
 */
export const SANDBOX_VARIABLE = 'AGENT_SANDBOX';
export const SANDBOX_MARK = 'bwrap';

export interface SandboxPlan {
  /** Directories that the child sees as empty and writable (a fresh tmpfs): the user's home, the temporary directory. */
  hiddenDirectories: readonly string[];
  /** Directories that it sees as empty and read-only, so that a write there fails rather than vanish: the agent's home. */
  sealedDirectories: readonly string[];
  /** Files outside those that it may not read either (a config file kept elsewhere). */
  hiddenFiles: readonly string[];
  /** Paths inside a hidden directory that it needs to read: the script, the program and the files named on its command line. */
  readable: readonly string[];
  /** Paths it may write: the workspace, and what the operator added. */
  writable: readonly string[];
  /** Where it starts; the workspace when this lies in a hidden place. */
  cwd: string;
  /** Whether it keeps the network; without, it has a loopback device of its own. */
  network: boolean;
  /** Whether capabilities must be dropped explicitly: a sandbox started by root keeps them otherwise. */
  dropCapabilities: boolean;
}

/** `path` without a trailing separator; `/` stays `/`. */
function normal(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

/** Whether `path` is `directory` or lies below it. */
export function isWithin(directory: string, path: string): boolean {
  const dir = normal(directory);
  const target = normal(path);
  return dir === '/' || target === dir || target.startsWith(`${dir}/`);
}

/** The hidden directories that are not inside another one, never the root itself. */
function outermost(directories: readonly string[]): string[] {
  const candidates = [...new Set(directories.map(normal))].filter((dir) => dir !== '/');
  return candidates.filter((dir) => !candidates.some((other) => other !== dir && isWithin(other, dir))).sort();
}

/** Paths by depth, so that a bind inside another bind comes after it. */
function byDepth(paths: readonly string[]): string[] {
  return [...new Set(paths.map(normal))].sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
}

/** Where the child starts: its own directory when it can see it, else the first writable path. */
export function visibleDirectory(
  plan: Pick<SandboxPlan, 'hiddenDirectories' | 'sealedDirectories' | 'readable' | 'writable'>,
  cwd: string,
): string | null {
  const hidden = [...plan.hiddenDirectories, ...plan.sealedDirectories].some((dir) => isWithin(dir, cwd));
  const bound = [...plan.readable, ...plan.writable].some((path) => isWithin(path, cwd));
  if (!hidden || bound) return cwd;
  return plan.writable[0] ?? null;
}

/**
 * The arguments of bwrap before `--` and the program:
 * - a PID namespace of its own (`--unshare-pid`) with its own `/proc`, so no other process of the
 *   machine, the agent's included, can be seen or signalled;
 * - the whole file system read-only, a fresh `/dev`, the hidden directories as empty tmpfs, the
 *   hidden files unreadable, then what it may read (read-only) and write (read-write) bound back;
 * - killed with its parent, no capabilities, no new privileges (bwrap always sets
 *   PR_SET_NO_NEW_PRIVS), and no network when the plan says so.
 */
export function bubblewrapArguments(plan: SandboxPlan): string[] {
  const args = ['--die-with-parent', '--unshare-pid', '--unshare-ipc'];
  if (!plan.network) args.push('--unshare-net');
  if (plan.dropCapabilities) args.push('--cap-drop', 'ALL');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  const sealed = outermost(plan.sealedDirectories);
  const hidden = [...outermost(plan.hiddenDirectories).filter((dir) => !sealed.some((seal) => isWithin(seal, dir))), ...sealed];
  const writable = byDepth(plan.writable);
  // What is only read, and lies in a hidden place outside every writable path, is bound read-only.
  const readable = byDepth(plan.readable).filter(
    (path) => hidden.some((dir) => isWithin(dir, path)) && !writable.some((dir) => isWithin(dir, path)),
  );
  // Every mount by depth, a fresh directory before a bind at the same place: a directory inside
  // another is mounted on what the outer one left (a workspace bound into the sealed home, the home
  // sealed inside a writable directory that holds it).
  const mounts = [
    ...hidden.map((dir) => ({ path: dir, rank: 0, words: ['--tmpfs', dir] })),
    ...readable.map((path) => ({ path, rank: 1, words: ['--ro-bind', path, path] })),
    ...writable.map((path) => ({ path, rank: 1, words: ['--bind', path, path] })),
  ].sort((a, b) => a.path.split('/').length - b.path.split('/').length || a.rank - b.rank);
  for (const mount of mounts) args.push(...mount.words);
  // A hidden file is masked where it can be seen: outside every hidden directory, or inside a bound path.
  const bound = [...readable, ...writable];
  for (const file of byDepth(plan.hiddenFiles)) {
    const seen = !hidden.some((dir) => isWithin(dir, file)) || bound.some((path) => isWithin(path, file));
    if (seen) args.push('--ro-bind', '/dev/null', file);
  }
  for (const dir of sealed) args.push('--remount-ro', dir);
  args.push('--setenv', SANDBOX_VARIABLE, SANDBOX_MARK, '--chdir', plan.cwd);
  return args;
}

/** Whether `cmdline` (NUL-separated, as in /proc/1/cmdline) is that of a sandbox this service started. */
export function isSandboxCommandLine(cmdline: string): boolean {
  const words = cmdline.split('\0');
  if (!/(^|\/)bwrap$/.test(words[0] ?? '')) return false;
  return words.some((word, index) => word === '--setenv' && words[index + 1] === SANDBOX_VARIABLE && words[index + 2] === SANDBOX_MARK);
}
