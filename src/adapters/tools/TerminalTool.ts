import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable, optional } from 'inversify';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { withoutProviderSecrets } from '../process/childEnvironment.js';
import { whenChildFinished } from '../process/childFinished.js';
import { childProcesses } from '../process/childProcesses.js';
import { HeadAndTailOutput } from '../process/HeadAndTailOutput.js';
import type { ProcessTreeKiller } from '../process/ProcessTreeKiller.js';
import { PROCESS_TOKENS } from '../process/tokens.js';
import { displayPath } from '../shared/displayPath.js';
import { ToolInputError, type Tool, type ToolCallContext, type ToolSpec } from './Tool.js';
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
 * `terminal`: runs one shell command (`/bin/sh -c`) in the agent's workspace and returns its
 * exit code and output. The command runs without provider secrets in its environment and as
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

  constructor(
    @inject(TOKENS.AgentPaths) paths: AgentPaths,
    @inject(PROCESS_TOKENS.ProcessTreeKiller) private readonly killer: ProcessTreeKiller,
    @inject(TOOL_TOKENS.TerminalWorkingDirectory) @optional() workingDirectory?: string,
  ) {
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
    try {
      await mkdir(this.workingDirectory, { recursive: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      return notRun(`The working directory ${displayPath(this.workingDirectory)} could not be created (${code}).`);
    }
    return this.execute(command, timeoutSeconds, signal, context.environment);
  }

  private async execute(
    command: string,
    timeoutSeconds: number,
    signal: AbortSignal,
    environment: ToolCallContext['environment'],
  ): Promise<TerminalResult> {
    const { spawn } = await childProcesses();
    return new Promise<TerminalResult>((resolve) => {
      const child = spawn('/bin/sh', ['-c', command], {
        cwd: this.workingDirectory,
        env: { ...withoutProviderSecrets(process.env), ...environment },
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group, so that a timeout or a cancellation can kill all it started.
        detached: true,
      });
      const stdout = new HeadAndTailOutput(KEPT_BYTES_PER_END, KEPT_BYTES_PER_END);
      const stderr = new HeadAndTailOutput(KEPT_BYTES_PER_END, KEPT_BYTES_PER_END);
      let stoppedBy: 'timeout' | 'cancellation' | null = null;
      let settled = false;

      const stop = (reason: 'timeout' | 'cancellation') => {
        if (settled || stoppedBy) return;
        stoppedBy = reason;
        if (child.pid !== undefined) void this.killer.killTree(child.pid);
      };
      const timer = setTimeout(() => stop('timeout'), timeoutSeconds * 1000);
      const onAbort = () => stop('cancellation');
      signal.addEventListener('abort', onAbort, { once: true });

      const finish = (exitCode: number | null, note: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve({
          exit_code: exitCode,
          stdout: stdout.text(),
          stderr: stderr.text(),
          timed_out: stoppedBy === 'timeout',
          ...(note ? { note } : {}),
        });
      };

      child.stdout.on('data', (chunk: Buffer) => stdout.append(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.append(chunk));
      child.on('error', (error: NodeJS.ErrnoException) =>
        finish(null, `The shell /bin/sh could not be started (${error.code ?? error.message}).`),
      );
      whenChildFinished(child, (code, killedBy) => {
        if (stoppedBy === 'timeout') {
          finish(null, `The command was still running after ${timeoutSeconds} s and was killed with everything it started.`);
        } else if (stoppedBy === 'cancellation') {
          finish(null, 'The run was cancelled, so the command was killed with everything it started.');
        } else {
          finish(code, killedBy ? `The command was killed by signal ${killedBy}.` : null);
        }
      });
    });
  }
}

function notRun(note: string): TerminalResult {
  return { exit_code: null, stdout: '', stderr: '', timed_out: false, note };
}
