import {
  ScriptPathError,
  type ScriptExecutor,
  type ScriptResult,
  type ScriptRunOptions,
} from '../../../src/application/ports/ScriptExecutor.js';

/** A canned result; `until` holds the script "running" until it settles. */
export type FakeScript = Partial<ScriptResult> & { until?: Promise<void> };

/** Scripts by name with canned results; any other name is outside the scripts directory. */
export class FakeScriptExecutor implements ScriptExecutor {
  readonly runs: string[] = [];
  /** The options of each run, in order. */
  readonly options: ScriptRunOptions[] = [];

  constructor(readonly scripts: Record<string, FakeScript> = {}) {}

  async check(path: string): Promise<string> {
    if (!(path in this.scripts)) throw new ScriptPathError(`The script "${path}" is not in the scripts directory.`);
    return path;
  }

  async run(path: string, options: ScriptRunOptions = { timeoutMs: 0 }): Promise<ScriptResult> {
    this.runs.push(path);
    this.options.push(options);
    const { until, ...result } = this.scripts[path] ?? {};
    await until;
    return { exitCode: 0, stdout: '', stderr: '', timedOut: false, signal: null, startProblem: null, ...result };
  }
}
