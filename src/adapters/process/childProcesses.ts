import type * as ChildProcessModule from 'node:child_process';
import type { LauncherSpawner } from './launcherSpawner.js';

let loading: Promise<typeof ChildProcessModule> | null = null;

/**
 * node:child_process, loaded on first use. It pulls in net, dgram and the stream machinery,
 * which a command that starts no process (`agent cron list` with nothing due) should not pay
 * for at start-up.
 */
export function childProcesses(): Promise<typeof ChildProcessModule> {
  loading ??= import('node:child_process');
  return loading;
}

/** What ChildProcessRunner uses of a started child: a ChildProcess, or one the launcher started. */
export interface RunningChild {
  readonly pid?: number | undefined;
  readonly stdin: { on(event: 'error', listener: () => void): unknown; end(text: string): unknown } | null;
  readonly stdout: RunningOutput | null;
  readonly stderr: RunningOutput | null;
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
  once(event: 'exit' | 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
}

export interface RunningOutput {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  destroy(): unknown;
}

let launcher: LauncherSpawner | null = null;

/**
 * From now on children are started by the launcher (launcherSpawner.ts), a small resident process
 * whose forks cost a third of this one's: the gateway, which starts a child per run. `script` is
 * the built dist/launcher.js. Commands keep starting theirs directly: a launcher costs more than
 * the few children they start.
 */
export async function startChildrenThroughLauncher(script: string): Promise<void> {
  // Its streams are Unix sockets.
  if (launcher || process.platform === 'win32') return;
  const [{ LauncherSpawner }, { dyingWithThisProcess }] = await Promise.all([
    import('./launcherSpawner.js'),
    import('./parentDeathSignal.js'),
  ]);
  // Through setpriv where it is: the launcher, and so every child, dies with this process.
  const launch = await dyingWithThisProcess({ program: process.execPath, args: [] }, process.env);
  launcher = await LauncherSpawner.start(script, launch.wrapped ? launch : null);
}

/** The launcher, once started and while it runs. */
export function childLauncher(): LauncherSpawner | null {
  return launcher?.alive ? launcher : null;
}
