import { PIPE_CLOSE_GRACE_MS, whenChildFinished } from './childFinished.js';
import type { SpawnOptions } from 'node:child_process';
import { childLauncher, childProcesses, type RunningChild } from './childProcesses.js';
import { newTreeMark, TREE_MARK_VARIABLE } from './markedProcesses.js';
import { dyingWithThisProcess, ExecFailureWatch } from './parentDeathSignal.js';
import type { PermitPool, Release } from '../../domain/PermitPool.js';
import type { ProcessTreeKiller } from '../../application/ports/ProcessTreeKiller.js';
import { SandboxUnavailableError, type Sandbox } from '../../application/ports/Sandbox.js';

/** Where one output stream of the child goes: CappedOutput or HeadAndTailOutput. */
export interface OutputSink {
  append(chunk: Buffer): void;
}

/** One child to run. Nothing is taken from this process implicitly, the environment least of all. */
export interface ChildRunSpec {
  program: string;
  args: readonly string[];
  /** The child's whole environment; the caller decides what it may see (see ChildEnvironments.ts). */
  env: NodeJS.ProcessEnv;
  /** Working directory; default this process's. */
  cwd?: string;
  /** Written to the child's stdin, which is then closed; without it stdin is not connected. */
  stdin?: string;
  /** Receives stdout; without it stdout is not connected. */
  stdout?: OutputSink;
  /** Receives stderr; without it stderr is not connected. */
  stderr?: OutputSink;
  /** The child is stopped this long after it started; null or absent for no limit. */
  timeoutMs?: number | null;
  /** The child is stopped this long after its last output on stdout or stderr (or its start); null or absent for none. */
  idleTimeoutMs?: number | null;
  /** The child is stopped when this fires; when it has fired already, the child is not started. */
  signal?: AbortSignal;
  /**
   * Run it in this sandbox (docs/processes.md), with `workspace` writable and `readable` readable
   * besides, starting in `startIn` there (default `cwd`, or the workspace when that is hidden).
   */
  sandbox?: { by: Sandbox; workspace: string; readable?: readonly string[]; startIn?: string };
  /**
   * The child waits for one of these before it starts (`agent.max_concurrent_processes`), and
   * gives it back when it ended; its time limits count from its start.
   */
  permits?: PermitPool;
}

/** Why this runner stopped a child. */
export type StopReason = 'timeout' | 'idle' | 'aborted';

/** How a run ended. */
export type ChildRunEnd =
  /** The child ended by itself: its exit code, or the signal that ended it when it has none. */
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null }
  /** This runner stopped it, and killed its tree, for `reason`; the first reason wins. */
  | { kind: 'stopped'; reason: StopReason }
  /** It could not be started (ENOENT, EACCES …). */
  | { kind: 'not_started'; error: NodeJS.ErrnoException };

/**
 * The one way this service starts a child process and waits for it (docs/processes.md):
 * the command agent, the terminal tool, pre-run scripts, `gh` and the
 * bot-chat command line all go through it.
 *
 * The child is the leader of its own session and process group (`detached`, hidden on Windows),
 * and on Linux the kernel kills it when this process dies (see parentDeathSignal.ts),
 * is run without a shell, gets `stdin` as text and hands its output to the caller's sinks, which
 * bound what is kept. On a timeout, an idle timeout or an abort the whole tree is killed through
 * the ProcessTreeKiller. The run ends once the child has exited and its pipes have closed, or
 * {@link PIPE_CLOSE_GRACE_MS} after that if something it left behind still holds them; after a
 * kill, no later than that grace past the kill either, so a survivor cannot hold the run.
 */
export class ChildProcessRunner {
  constructor(
    private readonly killer: ProcessTreeKiller,
    private readonly graceMs: number = PIPE_CLOSE_GRACE_MS,
  ) {}

  /** Runs the child to its end. Never rejects: whatever happens is in the result. */
  async run(spec: ChildRunSpec): Promise<ChildRunEnd> {
    if (spec.signal?.aborted) return { kind: 'stopped', reason: 'aborted' };
    if (!spec.permits) return this.start(spec);
    let release: Release;
    try {
      release = await spec.permits.acquire(spec.signal);
    } catch {
      return { kind: 'stopped', reason: 'aborted' };
    }
    try {
      return await this.start(spec);
    } finally {
      release();
    }
  }

  private async start(spec: ChildRunSpec): Promise<ChildRunEnd> {
    let confined: { program: string; args: readonly string[] };
    try {
      confined = spec.sandbox
        ? await spec.sandbox.by.confine({
            program: spec.program,
            args: spec.args,
            cwd: spec.sandbox.startIn ?? spec.cwd,
            workspace: spec.sandbox.workspace,
            readable: spec.sandbox.readable,
          })
        : spec;
    } catch (error) {
      // bwrap insisted on and not working here, or the workspace that could not be made.
      const problem = error instanceof Error ? error : new Error(String(error));
      return {
        kind: 'not_started',
        error: Object.assign(problem, {
          code: error instanceof SandboxUnavailableError ? 'ESANDBOX' : ((error as NodeJS.ErrnoException).code ?? 'ESANDBOX'),
        }),
      };
    }
    const [{ spawn }, launch] = await Promise.all([
      childProcesses(),
      // Killed by the kernel when this process dies, kill -9 included (Linux).
      dyingWithThisProcess({ program: confined.program, args: confined.args }, spec.env, spec.cwd),
    ]);
    // Through setpriv or bubblewrap, stderr also says whether the program could be executed at all.
    const watchedStart = launch.wrapped || confined !== spec;
    // Everything the child starts inherits the mark, so a stop finds what left its tree too.
    const mark = newTreeMark();
    const options: SpawnOptions = {
      cwd: spec.cwd,
      env: { ...spec.env, [TREE_MARK_VARIABLE]: mark },
      stdio: [
        spec.stdin === undefined ? 'ignore' : 'pipe',
        spec.stdout ? 'pipe' : 'ignore',
        spec.stderr || watchedStart ? 'pipe' : 'ignore',
      ],
      // Its own session and process group, which the tree killer sweeps as well.
      detached: true,
      windowsHide: true,
    };
    // Stopped while the above was looked up: nothing is started.
    if (spec.signal?.aborted) return { kind: 'stopped', reason: 'aborted' };
    // In the gateway, the launcher forks (a small process forks faster than a large one).
    const launcher = childLauncher();
    const child: RunningChild = launcher
      ? await launcher.spawn(launch.program, [...launch.args], options)
      : spawn(launch.program, [...launch.args], options);
    return new Promise<ChildRunEnd>((resolve) => {
      let stoppedFor: StopReason | null = null;
      let settled = false;
      let timeoutTimer: NodeJS.Timeout | undefined;
      let idleTimer: NodeJS.Timeout | undefined;
      let killGraceTimer: NodeJS.Timeout | undefined;

      const settle = (end: ChildRunEnd) => {
        if (settled) return;
        settled = true;
        clearTimeout(timeoutTimer);
        clearTimeout(idleTimer);
        clearTimeout(killGraceTimer);
        spec.signal?.removeEventListener('abort', onAbort);
        resolve(end);
      };

      const stop = (reason: StopReason) => {
        if (settled || stoppedFor) return;
        stoppedFor = reason;
        clearTimeout(timeoutTimer);
        clearTimeout(idleTimer);
        const killed = child.pid === undefined ? Promise.resolve() : this.killer.killTree(child.pid, mark);
        void killed.finally(() => {
          // A member that survived the kill may hold the pipes, or be the child itself.
          killGraceTimer = setTimeout(() => {
            child.stdout?.destroy();
            child.stderr?.destroy();
            settle({ kind: 'stopped', reason });
          }, this.graceMs);
        });
      };
      const onAbort = () => stop('aborted');

      const restartIdleTimer = () => {
        const idleTimeoutMs = spec.idleTimeoutMs;
        if (idleTimeoutMs == null || settled || stoppedFor) return;
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => stop('idle'), idleTimeoutMs);
      };

      if (spec.stdout) {
        const sink = spec.stdout;
        child.stdout?.on('data', (chunk: Buffer) => {
          sink.append(chunk);
          restartIdleTimer();
        });
      }
      const execFailure = watchedStart ? new ExecFailureWatch(spec.stderr) : null;
      if (spec.stderr || execFailure) {
        const sink = execFailure ?? spec.stderr!;
        child.stderr?.on('data', (chunk: Buffer) => {
          sink.append(chunk);
          restartIdleTimer();
        });
      }
      child.on('error', (error: NodeJS.ErrnoException) => {
        if (!stoppedFor) settle({ kind: 'not_started', error });
      });
      whenChildFinished(
        child,
        (code, signal) => {
          if (stoppedFor) return settle({ kind: 'stopped', reason: stoppedFor });
          const notExecuted = execFailure?.startError(code) ?? null;
          settle(notExecuted ? { kind: 'not_started', error: notExecuted } : { kind: 'exited', code, signal });
        },
        this.graceMs,
      );

      if (spec.timeoutMs != null) timeoutTimer = setTimeout(() => stop('timeout'), spec.timeoutMs);
      spec.signal?.addEventListener('abort', onAbort, { once: true });
      // A signal that fired while the launcher was starting the child fired before the listener.
      if (spec.signal?.aborted) stop('aborted');
      restartIdleTimer();
      if (spec.stdin !== undefined && child.stdin) {
        // A child that exits before reading its stdin closes the pipe early; its exit says why.
        child.stdin.on('error', () => undefined);
        child.stdin.end(spec.stdin);
      }
    });
  }
}
