import { UNLIMITED_RUNS, type RunLimits } from '../../domain/PermitPool.js';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable, optional } from 'inversify';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { ChildEnvironments } from '../process/ChildEnvironments.js';
import { ChildProcessRunner } from '../process/ChildProcessRunner.js';
import { HeadAndTailOutput } from '../process/HeadAndTailOutput.js';
import type { ProcessTreeKiller } from '../../application/ports/ProcessTreeKiller.js';
import { NO_SANDBOX, type Sandbox } from '../../application/ports/Sandbox.js';
import { displayPath } from '../shared/displayPath.js';
import { ToolInputError, type Tool, type ToolCallContext, type ToolSpec } from '../../application/agent/ports/Tool.js';
import { ToolArguments } from './ToolArguments.js';
import { TOOL_TOKENS } from './tokens.js';

const DEFAULT_TIMEOUT_SECONDS = 60;
const MAX_TIMEOUT_SECONDS = 600;
/** Per stream, the start and the end are kept: at most 50 KB each of stdout and stderr. */
const KEPT_BYTES_PER_END = 25 * 1024;

/** What the model gets back, as JSON. */
export interface TerminalResult {
  /** Null when the command did not exit by itself (killed, or never started). */
  exit_code: number | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  /** Why there is no exit code, when there is none. */
  note?: string;
}

/**
 * `terminal`: runs one shell command (`/bin/sh -c`) in the agent's workspace (or the job's
 * working folder, which the call's context names) and returns its
 * exit code and output. The command runs in the sandbox (docs/processes.md), without the service's credentials in its environment and as
 * the leader of its own process group, so that on timeout or when the run is cancelled
 * everything it started is killed with it.
 */
@injectable()
export class TerminalTool implements Tool {
  readonly spec: ToolSpec = {
    name: 'terminal',
    description:
      'Run a shell command (/bin/sh -c) and get its exit code, stdout and stderr as JSON. Each call starts a ' +
      'new shell in the workspace directory: cd and variables do not carry over between calls. Output is ' +
      'cut to its first and last 25 KB per stream. A command still running at the timeout is killed with ' +
      'everything it started. Commands run without a terminal and without input; background processes ' +
      'outlive the call only if their output goes to a file.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The shell command.' },
        timeout_seconds: {
          type: 'number',
          description: `Seconds before the command is killed; default ${DEFAULT_TIMEOUT_SECONDS}, at most ${MAX_TIMEOUT_SECONDS}.`,
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
  };

  private readonly workingDirectory: string;
  private readonly children: ChildProcessRunner;

  constructor(
    @inject(TOKENS.AgentPaths) paths: AgentPaths,
    @inject(TOKENS.ProcessTreeKiller) killer: ProcessTreeKiller,
    @inject(TOOL_TOKENS.TerminalWorkingDirectory) @optional() workingDirectory?: string,
    @inject(ChildEnvironments) @optional() private readonly environments: ChildEnvironments = ChildEnvironments.ofThisProcess(),
    @inject(TOKENS.Sandbox) @optional() private readonly sandbox: Sandbox = NO_SANDBOX,
    /** Without it (built by hand), any number run at once. */
    @inject(TOKENS.RunLimits) @optional() private readonly limits: RunLimits = UNLIMITED_RUNS,
  ) {
    this.children = new ChildProcessRunner(killer);
    this.workingDirectory = workingDirectory ?? join(paths.home, 'workspace');
  }

  async call(args: Record<string, unknown>, context: ToolCallContext): Promise<string> {
    const input = new ToolArguments('terminal', args);
    input.rejectUnknown(['command', 'timeout_seconds']);
    const command = input.requiredString('command', 'the shell command to run');
    const timeoutSeconds = input.number('timeout_seconds') ?? DEFAULT_TIMEOUT_SECONDS;
    if (timeoutSeconds <= 0 || timeoutSeconds > MAX_TIMEOUT_SECONDS) {
      throw new ToolInputError(
        `terminal: "timeout_seconds" must be more than 0 and at most ${MAX_TIMEOUT_SECONDS}; split longer work into steps.`,
      );
    }
    return JSON.stringify(await this.run(command, timeoutSeconds, context));
  }

  private async run(command: string, timeoutSeconds: number, context: ToolCallContext): Promise<TerminalResult> {
    const { signal } = context;
    if (signal.aborted) return notRun('The run was cancelled before the command started.');
    // A job's own working folder is the operator's: it must be there, it is never made up.
    if (context.workingDirectory) {
      if (!(await isFolder(context.workingDirectory))) {
        return notRun(`The working folder ${displayPath(context.workingDirectory)} of this job does not exist (any more).`);
      }
      return this.execute(command, timeoutSeconds, signal, context.environment, context.workingDirectory);
    }
    try {
      await mkdir(this.workingDirectory, { recursive: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      return notRun(`The working directory ${displayPath(this.workingDirectory)} could not be created (${code}).`);
    }
    return this.execute(command, timeoutSeconds, signal, context.environment, this.workingDirectory);
  }

  private async execute(
    command: string,
    timeoutSeconds: number,
    signal: AbortSignal,
    environment: ToolCallContext['environment'],
    workingDirectory: string,
  ): Promise<TerminalResult> {
    const stdout = new HeadAndTailOutput(KEPT_BYTES_PER_END, KEPT_BYTES_PER_END);
    const stderr = new HeadAndTailOutput(KEPT_BYTES_PER_END, KEPT_BYTES_PER_END);
    const end = await this.children.run({
      permits: this.limits.processes,
      program: '/bin/sh',
      args: ['-c', command],
      cwd: workingDirectory,
      env: { ...this.environments.forUntrusted(), ...environment },
      stdout,
      stderr,
      timeoutMs: timeoutSeconds * 1000,
      signal,
      sandbox: { by: this.sandbox, workspace: workingDirectory },
    });
    const result = (exitCode: number | null, note: string | null): TerminalResult => ({
      exit_code: exitCode,
      stdout: stdout.text(),
      stderr: stderr.text(),
      timed_out: end.kind === 'stopped' && end.reason === 'timeout',
      ...(note ? { note } : {}),
    });
    switch (end.kind) {
      case 'not_started':
        return result(
          null,
          end.error.code === 'ESANDBOX'
            ? `The command was not run: ${end.error.message}`
            : `The shell /bin/sh could not be started (${end.error.code ?? end.error.message}).`,
        );
      case 'stopped':
        return end.reason === 'timeout'
          ? result(null, `The command was still running after ${timeoutSeconds} s and was killed with everything it started.`)
          : result(null, 'The run was cancelled, so the command was killed with everything it started.');
      case 'exited':
        return result(end.code, end.signal ? `The command was killed by signal ${end.signal}.` : null);
    }
  }
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

function notRun(note: string): TerminalResult {
  return { exit_code: null, stdout: '', stderr: '', timed_out: false, note };
}
