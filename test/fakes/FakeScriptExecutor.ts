import {
  ScriptPathError,
  type ScriptExecutor,
  type ScriptResult,
} from '../../src/application/ports/ScriptExecutor.js';

/** Scripts by name with canned results; any other name is outside the scripts directory. */
export class FakeScriptExecutor implements ScriptExecutor {
  readonly runs: string[] = [];

  constructor(readonly scripts: Record<string, Partial<ScriptResult>> = {}) {}

  async check(path: string): Promise<string> {
    if (!(path in this.scripts)) throw new ScriptPathError(`The script "${path}" is not in the scripts directory.`);
    return path;
  }

  async run(path: string): Promise<ScriptResult> {
    this.runs.push(path);
    return { exitCode: 0, stdout: '', stderr: '', timedOut: false, ...this.scripts[path] };
  }
}
