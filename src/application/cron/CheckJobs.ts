import { inject, injectable } from 'inversify';
import type { SkillLibrary } from '../ports/ContextFiles.js';
import type { JobRepository } from '../ports/JobRepository.js';
import { TOKENS } from '../ports/tokens.js';
import { JobPreflight } from './JobPreflight.js';

/** What stands in the way of one job's next run; `problems` is empty when nothing does. */
export interface JobCheck {
  id: string;
  name: string;
  problems: string[];
}

export interface JobCheckReport {
  jobs: JobCheck[];
  /** Stored records that could not be read, one sentence each. */
  unreadable: string[];
}

/**
 * Checks every job the way a run would before spending anything (provider and model, script,
 * delivery targets), plus the skills it names, which a run would only warn about. Contacts no
 * platform and runs nothing. Paused jobs are checked too: resuming one should not be a surprise.
 */
@injectable()
export class CheckJobs {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(JobPreflight) private readonly preflight: JobPreflight,
    @inject(TOKENS.SkillLibrary) private readonly skills: SkillLibrary,
  ) {}

  async execute(): Promise<JobCheckReport> {
    const { jobs, unreadable } = await this.repository.load();
    const checks: JobCheck[] = [];
    for (const job of jobs) {
      const problems: string[] = [];
      const preflight = await this.preflight.check(job);
      if (!preflight.ok) problems.push(preflight.error);
      for (const skill of job.skills) {
        if ((await this.skills.find(skill)) === null) {
          problems.push(`The skill "${skill}" was not found; add skills/${skill}/SKILL.md under the agent home or remove it from the job.`);
        }
      }
      checks.push({ id: job.id, name: job.name, problems });
    }
    return {
      jobs: checks,
      unreadable: unreadable.map((record) => `Job record ${record.id ?? `#${record.index + 1}`} could not be read: ${record.reason}`),
    };
  }
}
