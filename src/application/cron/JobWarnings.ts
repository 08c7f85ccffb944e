import { inject, injectable } from 'inversify';
import { parseDeliveryTargets, type DeliveryTarget } from '../../domain/DeliveryTarget.js';
import { AppError } from '../../domain/errors.js';
import type { Job } from '../../domain/Job.js';
import { cronRunToolsets, JOB_TOOLSET, toolsInToolsets } from '../../domain/toolsets.js';
import type { SkillLibrary } from '../ports/ContextFiles.js';
import type { DeliveryChannel } from '../ports/DeliveryChannel.js';
import { TOKENS } from '../ports/tokens.js';

/**
 * What would keep a job just created or changed from doing what it says, told at once rather than
 * at its first run: a target whose platform is not configured on this host (or lacks the home
 * channel or the kind of address the target needs), a named channel that neither config.yaml nor
 * the channel directory knows, a skill that is not found, the job tool among its toolsets. Warnings, not refusals: targets are
 * resolved and skills loaded when the job runs, so what is set up before then is used. The one
 * check behind `agent cron create`/`edit` and the `cronjob` tool. Contacts no platform.
 */
@injectable()
export class JobWarnings {
  constructor(
    @inject(TOKENS.DeliveryChannel) private readonly channel: DeliveryChannel,
    @inject(TOKENS.SkillLibrary) private readonly skills: SkillLibrary,
  ) {}

  /** One sentence per problem, each once, targets first in the order the job names them; [] when none. */
  async about(job: Job): Promise<string[]> {
    const warnings = new Set<string>();
    for (const target of targetsOf(job)) {
      const problem = await this.problemWith(target);
      if (problem !== null) warnings.add(problem);
    }
    for (const skill of job.skills) {
      const problem = await this.skillProblem(skill);
      if (problem !== null) warnings.add(problem);
    }
    if (job.toolsets && toolsInToolsets(job.toolsets).includes(JOB_TOOLSET)) {
      const kept = toolsInToolsets(cronRunToolsets(job.toolsets));
      warnings.add(
        `The job tool (cronjob) is never given to a cron run, whatever the job names; its runs get ${kept.length > 0 ? kept.join(', ') : 'no tools at all'}.`,
      );
    }
    return [...warnings];
  }

  private async problemWith(target: DeliveryTarget): Promise<string | null> {
    if (target.kind === 'all') {
      return this.channel.homeTargets().length === 0
        ? 'The delivery target "all" names no platform yet: none is configured with a home channel.'
        : null;
    }
    if (target.kind !== 'platform') return null;
    return this.channel.problemWith(target) ?? (await this.channel.channelProblemWith(target));
  }

  private async skillProblem(skill: string): Promise<string | null> {
    try {
      if ((await this.skills.find(skill)) !== null) return null;
    } catch (error) {
      // A SKILL.md that is there but cannot be read fails the same way at every run.
      if (error instanceof AppError) return error.message;
      throw error;
    }
    return `The skill "${skill}" was not found: add skills/${skill}/SKILL.md under the agent home, or runs go on without it.`;
  }
}

/** The job's targets; a stored `deliver` that no longer parses is the run's to report, not a warning's. */
function targetsOf(job: Job): DeliveryTarget[] {
  try {
    return parseDeliveryTargets(job.deliver);
  } catch {
    return [];
  }
}
