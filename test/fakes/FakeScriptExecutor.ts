import {
  ScriptPathError,
  type ScriptExecutor,
  type ScriptResult,
} from '../../src/application/ports/ScriptExecutor.js';

/** A canned result; `until` holds the script "running" until it settles. */
export type FakeScript = Partial<ScriptResult> & { until?: Promise<void> };

/** Scripts by name with canned results; any other name is outside the scripts directory. */
export class FakeScriptExecutor implements ScriptExecutor {
  readonly runs: string[] = [];

  constructor(readonly scripts: Record<string, FakeScript> = {}) {}

  async check(path: string): Promise<string> {
    if (!(path in this.scripts)) throw new ScriptPathError(`The script "${path}" is not in the scripts directory.`);
    return path;
  }

  async run(path: string): Promise<ScriptResult> {
    this.runs.push(path);
    const { until, ...result } = this.scripts[path] ?? {};
    await until;
    return { exitCode: 0, stdout: '', stderr: '', timedOut: false, ...result };
  }
}
