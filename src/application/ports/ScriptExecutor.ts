import { AppError } from '../../domain/errors.js';

/** A script path that may not be run: outside the scripts directory, missing or not a file. */
export class ScriptPathError extends AppError {
  constructor(message: string) {
    super('SCRIPT.INVALID', message);
  }
}

export interface ScriptResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs a job's pre-run script (decisions §6). */
export interface ScriptExecutor {
  /**
   * Checks that `path` names an existing file inside the scripts directory and returns it as
   * stored (relative to that directory). Throws ScriptPathError otherwise; runs nothing.
   */
  check(path: string): Promise<string>;
  /** Runs the script; never throws for the script's own failure, which is in the result. */
  run(path: string, options: { timeoutMs: number }): Promise<ScriptResult>;
}
