import { inject, injectable } from 'inversify';
import { errorText } from '../../domain/errors.js';
import type { Job } from '../../domain/Job.js';
import type { ScriptExecutor } from '../ports/ScriptExecutor.js';
import { TOKENS } from '../ports/tokens.js';
import type { WorkingDirectories } from '../ports/WorkingDirectories.js';

/**
 * What a job names on disk, as it stands before a run: its pre-run script inside the scripts
 * directory, its working folder still there (a folder removed since the job was saved: nothing
 * runs rather than somewhere else). Part of JobPreflight.
 */
@injectable()
export class JobFileChecks {
  constructor(
    @inject(TOKENS.ScriptExecutor) private readonly scripts: ScriptExecutor,
    @inject(TOKENS.WorkingDirectories) private readonly workdirs: WorkingDirectories,
  ) {}

  /** One sentence per problem; none when the script and the folder are fine (or not set). */
  async problems(job: Job): Promise<string[]> {
    const problems: string[] = [];
    const checks = [
      job.script ? () => this.scripts.check(job.script!) : null,
      job.workdir ? () => this.workdirs.check(job.workdir!) : null,
    ];
    for (const check of checks) {
      if (check === null) continue;
      try {
        await check();
      } catch (error) {
        problems.push(errorText(error));
      }
    }
    return problems;
  }
}
