import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

/** A script path that may not be run: outside the scripts directory, missing or not a file. */
export class ScriptPathError extends AppError {
  constructor(message: string) {
    super(ERROR_CODES.SCRIPT.INVALID, message);
  }
}

/** How a script run ended. */
export interface ScriptResult {
  /**
   * The script's exit code; null when it has none: it could not be started (`startProblem`), was
   * killed for the timeout (`timedOut`) or by a signal (`signal`), or its run was cancelled.
   */
  exitCode: number | null;
  stdout: string;
  /** What the script wrote to stderr. */
  stderr: string;
  /** True when it was killed for running past its timeout. */
  timedOut: boolean;
  /** The signal that ended it (`SIGKILL` …) when that was not the timeout; else null. */
  signal: string | null;
  /** One sentence saying why it could not be started and what to check; null when it started. */
  startProblem: string | null;
}

export interface ScriptRunOptions {
  timeoutMs: number;
  /** Variables added to the script's environment (a cron run's `AGENT_CRON_RUN`). */
  environment?: Readonly<Record<string, string>>;
  /**
   * The folder the script runs in and may write (its job's `workdir`); absent: it runs in the
   * scripts directory and may write the workspace.
   */
  workingDirectory?: string | null;
  /** Cancels the run: the script's process tree is killed and the result says so. */
  signal?: AbortSignal;
}

/** Runs a job's pre-run script (docs/configuration.md, Pre-run scripts). */
export interface ScriptExecutor {
  /**
   * Checks that `path` names an existing file inside the scripts directory and returns it as
   * stored (relative to that directory). Throws ScriptPathError otherwise; runs nothing.
   */
  check(path: string): Promise<string>;
  /** Runs the script; never throws for the script's own failure, which is in the result. */
  run(path: string, options: ScriptRunOptions): Promise<ScriptResult>;
}
