import { UNLIMITED_RUNS, type RunLimits } from '../../domain/PermitPool.js';
import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { inject, injectable, optional } from 'inversify';
import { ScriptPathError, type ScriptExecutor, type ScriptResult, type ScriptRunOptions } from '../../application/ports/ScriptExecutor.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { displayPath } from '../shared/displayPath.js';
import { CappedOutput } from './CappedOutput.js';
import { ChildEnvironments } from './ChildEnvironments.js';
import { ChildProcessRunner } from './ChildProcessRunner.js';
import type { ProcessTreeKiller } from '../../application/ports/ProcessTreeKiller.js';
import { NO_SANDBOX, type Sandbox } from '../../application/ports/Sandbox.js';

/** Output kept per stream; the rest is dropped and a marker says so. */
const MAX_OUTPUT_BYTES = 1024 * 1024;
const CANCELLED = 'The script was stopped because its run was cancelled.';

/** Interpreters for scripts that are not executable themselves. */
const INTERPRETERS: Readonly<Record<string, string>> = {
  '.sh': 'bash',
  '.bash': 'bash',
  '.py': 'python3',
  '.js': process.execPath,
  '.mjs': process.execPath,
  '.cjs': process.execPath,
};

/** A script that passed the checks: where it was named and where it really is. */
interface LocatedScript {
  /** As stored in the job: relative to the scripts directory. */
  relativePath: string;
  /** After following every symbolic link; inside the real scripts directory. */
  realPath: string;
  scriptsDir: string;
}

type Launch = { program: string; args: string[] } | { problem: string };

/**
 * Runs pre-run scripts as child processes (docs/configuration.md). Scripts live under
 * `$AGENT_HOME/scripts/`; a path is checked when a job is saved and again before each run, and a
 * path that leaves the directory, lexically or through a symbolic link, is refused.
 *
 * Each script runs in the sandbox (docs/processes.md), in its own session and process group with the scripts directory as working
 * directory (read-only there), or its job's working folder (writable) when it has one, and without the service's credentials in its environment; on timeout its whole process tree is
 * killed (docs/processes.md).
 */
@injectable()
export class ProcessScriptExecutor implements ScriptExecutor {
  private readonly children: ChildProcessRunner;

  constructor(
    @inject(TOKENS.AgentPaths) private readonly paths: AgentPaths,
    @inject(TOKENS.ProcessTreeKiller) killer: ProcessTreeKiller,
    @inject(ChildEnvironments) @optional() private readonly environments: ChildEnvironments = ChildEnvironments.ofThisProcess(),
    @inject(TOKENS.Sandbox) @optional() private readonly sandbox: Sandbox = NO_SANDBOX,
    /** Without it (built by hand), any number run at once. */
    @inject(TOKENS.RunLimits) @optional() private readonly limits: RunLimits = UNLIMITED_RUNS,
  ) {
    this.children = new ChildProcessRunner(killer);
  }

  /**
   * Returns `path` relative to the scripts directory when it names an existing file inside it
   * (an absolute path is accepted only inside it). Throws ScriptPathError otherwise.
   */
  async check(path: string): Promise<string> {
    return (await this.locate(path)).relativePath;
  }

  /**
   * Checks the path again, then runs the script: directly when it is executable (its shebang
   * line decides), else by its extension with bash, python3 or node. Throws ScriptPathError when
   * the path no longer passes the check. Everything the script itself does wrong — cannot be
   * started, non-zero exit, timeout, killed by a signal — is in the result: `startProblem` says
   * why it could not start, `timedOut` and `signal` why it has no exit code.
   */
  async run(path: string, options: ScriptRunOptions): Promise<ScriptResult> {
    const script = await this.locate(path);
    const launch = await launchFor(script);
    if ('problem' in launch) {
      return { exitCode: null, stdout: '', stderr: '', timedOut: false, signal: null, startProblem: launch.problem };
    }
    return this.execute(script, launch, options);
  }

  private get shownScriptsDir(): string {
    return displayPath(this.paths.scriptsDir);
  }

  private async locate(path: string): Promise<LocatedScript> {
    const written = path.trim();
    if (written === '' || written.includes('\0')) {
      throw new ScriptPathError(
        `The script path ${JSON.stringify(path)} is not valid; give a file name relative to ${this.shownScriptsDir}.`,
      );
    }
    const scriptsDir = resolve(this.paths.scriptsDir);
    const realScriptsDir = await realPathOrNull(scriptsDir);
    const candidate = isAbsolute(written) ? resolve(written) : resolve(scriptsDir, written);
    // An absolute path may be written through the directory's real location too.
    const namedFrom = [scriptsDir, realScriptsDir].find((dir) => dir !== null && isWithin(dir, candidate));
    if (!namedFrom) {
      throw new ScriptPathError(
        `The script "${written}" is outside the scripts directory ${this.shownScriptsDir}; put it there and give its path relative to it.`,
      );
    }
    if (realScriptsDir === null) {
      throw new ScriptPathError(
        `The script "${written}" does not exist: the scripts directory ${this.shownScriptsDir} has not been created yet.`,
      );
    }
    const realPath = await realPathOrNull(candidate);
    if (realPath === null) {
      throw new ScriptPathError(`The script "${written}" does not exist in ${this.shownScriptsDir}.`);
    }
    if (!isWithin(realScriptsDir, realPath)) {
      throw new ScriptPathError(
        `The script "${written}" leads through a symbolic link to ${displayPath(realPath)}, outside the scripts directory ${this.shownScriptsDir}; scripts must stay inside it.`,
      );
    }
    if (!(await stat(realPath)).isFile()) {
      throw new ScriptPathError(`The script "${written}" is not a file; name a script file inside ${this.shownScriptsDir}.`);
    }
    return { relativePath: relative(namedFrom, candidate), realPath, scriptsDir: realScriptsDir };
  }

  private async execute(
    script: LocatedScript,
    launch: { program: string; args: string[] },
    options: ScriptRunOptions,
  ): Promise<ScriptResult> {
    const stdout = new CappedOutput(MAX_OUTPUT_BYTES, 'start');
    const stderr = new CappedOutput(MAX_OUTPUT_BYTES, 'start');
    const end = await this.children.run({
      permits: this.limits.processes,
      program: launch.program,
      args: launch.args,
      cwd: options.workingDirectory ?? script.scriptsDir,
      env: { ...this.environments.forUntrusted(), ...options.environment },
      stdout,
      stderr,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      // The scripts directory stays readable, and its working directory; the workspace (or the
      // job's working folder, where it then runs) is writable.
      sandbox: {
        by: this.sandbox,
        workspace: options.workingDirectory ?? join(this.paths.home, 'workspace'),
        readable: [script.scriptsDir],
      },
    });
    const result = (ending: Partial<ScriptResult>, note: string | null = null): ScriptResult => ({
      exitCode: null,
      stdout: withTruncationMarker(stdout),
      stderr: [withTruncationMarker(stderr), note].filter(Boolean).join('\n'),
      timedOut: false,
      signal: null,
      startProblem: null,
      ...ending,
    });
    switch (end.kind) {
      case 'not_started':
        return result({ startProblem: startProblem(launch.program, script, end.error) });
      case 'stopped':
        return end.reason === 'timeout' ? result({ timedOut: true }) : result({}, end.reason === 'aborted' ? CANCELLED : null);
      case 'exited':
        return result({ exitCode: end.code, signal: end.code === null ? end.signal : null });
    }
  }
}

async function launchFor(script: LocatedScript): Promise<Launch> {
  if (await isExecutable(script.realPath)) return { program: script.realPath, args: [] };
  const interpreter = INTERPRETERS[extname(script.realPath).toLowerCase()];
  if (interpreter) return { program: interpreter, args: [script.realPath] };
  return {
    problem:
      `The script "${script.relativePath}" is not executable and its extension is not one of ` +
      `${Object.keys(INTERPRETERS).join(', ')}; make it executable (chmod +x, with a shebang line) or rename it.`,
  };
}

async function isExecutable(path: string): Promise<boolean> {
  // Windows has no execute bit; there scripts always go through their interpreter.
  if (process.platform === 'win32') return false;
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function startProblem(program: string, script: LocatedScript, error: NodeJS.ErrnoException): string {
  if (error.code === 'ESANDBOX') return `The script "${script.relativePath}" was not run: ${error.message}`;
  if (program === script.realPath) {
    return `The script "${script.relativePath}" could not be started (${error.code ?? error.message}); check its shebang line.`;
  }
  if (error.code === 'ENOENT') {
    return `The script "${script.relativePath}" could not be started because ${program} was not found on PATH.`;
  }
  return `The script "${script.relativePath}" could not be started with ${program} (${error.code ?? error.message}).`;
}

function withTruncationMarker(output: CappedOutput): string {
  const text = output.text();
  return output.truncated ? `${text}\n[output cut off after ${MAX_OUTPUT_BYTES / (1024 * 1024)} MiB]` : text;
}

/** Whether `target` is `directory` or lies below it; a directory is refused later as not a file. */
function isWithin(directory: string, target: string): boolean {
  const path = relative(directory, target);
  return path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path);
}

async function realPathOrNull(path: string): Promise<string | null> {
  try {
    return await realpath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return null;
    throw new ScriptPathError(`The script path ${displayPath(path)} could not be examined (${code ?? String(error)}).`);
  }
}
