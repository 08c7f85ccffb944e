import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

/** A script path that may not be run: outside the scripts directory, missing or not a file. */
export class ScriptPathError extends AppError {
  constructor(message: string) {
    super(ERROR_CODES.SCRIPT.INVALID, message);
  }
}

export interface ScriptResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface ScriptRunOptions {
  timeoutMs: number;
  /** Variables added to the script's environment (a cron run's `AGENT_CRON_RUN`). */
  environment?: Readonly<Record<string, string>>;
  /** Cancels the run: the script's process tree is killed and the result says so. */
  signal?: AbortSignal;
}

/** Runs a job's pre-run script (decisions §6). */
export interface ScriptExecutor {
  /**
   * Checks that `path` names an existing file inside the scripts directory and returns it as
   * stored (relative to that directory). Throws ScriptPathError otherwise; runs nothing.
   */
  check(path: string): Promise<string>;
  /** Runs the script; never throws for the script's own failure, which is in the result. */
  run(path: string, options: ScriptRunOptions): Promise<ScriptResult>;
}
