import { childProcesses } from './childProcesses.js';
import { win32 } from 'node:path';
import type { Logger } from '../../application/ports/Logger.js';
import type { GracefulSignal, ProcessTreeKiller, TreeKillReport, TreeSignalReport } from '../../application/ports/ProcessTreeKiller.js';

/** Runs a program without a shell and resolves with its exit code (null: it could not run). */
export type RunProgram = (argv: readonly string[]) => Promise<{ exitCode: number | null; output: string }>;

export interface WindowsTreeKillOptions {
  logger?: Logger | null;
  /** Default: `%SystemRoot%`, else `C:\Windows`. */
  systemRoot?: string;
  /** Default: execFile, hidden window. Tests replace it: they run on Linux. */
  run?: RunProgram;
}

/** taskkill's exit code when no process has the pid. */
const TASKKILL_NOT_FOUND = 128;

/**
 * The argv that ends the tree of `rootPid` with taskkill: `/T` takes the whole tree, `/F` forces
 * (TerminateProcess); without `/F` each process is asked to close. taskkill.exe is named by its
 * full path under System32, so a program of that name in the working directory is never run.
 * Throws RangeError for a pid that is not a positive integer.
 */
export function taskkillArgv(rootPid: number, mode: 'force' | 'graceful', systemRoot: string): string[] {
  if (!Number.isSafeInteger(rootPid) || rootPid <= 0) throw new RangeError(`Not a process id: ${rootPid}`);
  const program = win32.join(systemRoot, 'System32', 'taskkill.exe');
  return [program, '/T', ...(mode === 'force' ? ['/F'] : []), '/PID', String(rootPid)];
}

/**
 * The process-tree killer on Windows: the system's own forced tree kill,
 * `taskkill /T /F /PID <pid>`. Windows has no stop signal, so nothing is suspended, and taskkill
 * does not say which processes it ended: the report names the root only.
 */
export class WindowsProcessTreeKiller implements ProcessTreeKiller {
  private readonly logger: Logger | null;
  private readonly systemRoot: string;
  private readonly run: RunProgram;

  constructor(options: WindowsTreeKillOptions = {}) {
    this.logger = options.logger ?? null;
    this.systemRoot = options.systemRoot ?? process.env.SystemRoot ?? 'C:\\Windows';
    this.run = options.run ?? runHidden;
  }

  /** Force-kills the tree; resolves once taskkill has finished. Never throws. */
  async killTree(rootPid: number): Promise<TreeKillReport> {
    const outcome = await this.taskkill(rootPid, 'force');
    if (outcome === 'failed') return { rootPid, killed: [], survivors: [rootPid], fallback: false };
    return { rootPid, killed: outcome === 'done' ? [rootPid] : [], survivors: [], fallback: false };
  }

  /**
   * Asks every process of the tree to close (taskkill without /F; console programs may ignore
   * it). The signal name only says that the request is graceful. Never throws.
   */
  async signalTree(rootPid: number, _signal: GracefulSignal): Promise<TreeSignalReport> {
    const outcome = await this.taskkill(rootPid, 'graceful');
    return { rootPid, signalled: outcome === 'done' ? [rootPid] : [], refused: outcome === 'failed' ? [rootPid] : [], fallback: false };
  }

  private async taskkill(rootPid: number, mode: 'force' | 'graceful'): Promise<'done' | 'gone' | 'failed'> {
    let argv: string[];
    try {
      argv = taskkillArgv(rootPid, mode, this.systemRoot);
    } catch (error) {
      this.logger?.warn(`Refused to end process tree ${rootPid}: ${(error as Error).message}.`);
      return 'failed';
    }
    const { exitCode, output } = await this.run(argv);
    if (exitCode === 0) return 'done';
    if (exitCode === TASKKILL_NOT_FOUND) return 'gone';
    this.logger?.warn(`Ending process tree ${rootPid} with taskkill failed (exit code ${exitCode ?? 'none'}): ${output.trim()}`, {
      rootPid,
    });
    return 'failed';
  }
}

const runHidden: RunProgram = async ([program, ...args]) => {
  const { execFile } = await childProcesses();
  return new Promise((resolve) => {
    execFile(program!, args, { windowsHide: true, encoding: 'utf8' }, (error, stdout, stderr) => {
      // execFile's error carries the exit code, or a string such as ENOENT when it did not run.
      const code: unknown = error ? (error as { code?: unknown }).code : 0;
      resolve({ exitCode: typeof code === 'number' ? code : null, output: `${stdout}${stderr}` || (error?.message ?? '') });
    });
  });
};
