import { inject, injectable } from 'inversify';
import { parseDeliveryTargets } from '../../domain/DeliveryTarget.js';
import { editJob, type CatchUp, type Job, type JobChanges } from '../../domain/Job.js';
import { parseSchedule } from '../../domain/Schedule.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { ScriptExecutor } from '../ports/ScriptExecutor.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';

export interface EditJobInput {
  job: string;
  schedule?: string;
  prompt?: string;
  name?: string;
  deliver?: string;
  /** Replaces the skill list; `[]` clears it. */
  skills?: readonly string[];
  /** A new script path, or null to remove the script. */
  script?: string | null;
  repeat?: number | null;
  model?: string | null;
  provider?: string | null;
  /** What an overdue slot does; null follows `cron.catch_up` again. */
  catch_up?: CatchUp | null;
  /** true: run only the script, without the agent; false: run the agent again. */
  no_agent?: boolean;
}

/**
 * Changes a job's configuration; unspecified fields stay as they are. A new name another job
 * has is refused (checked under the store's lock, like a create).
 */
@injectable()
export class EditJob {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.ScriptExecutor) private readonly scripts: ScriptExecutor,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
  ) {}

  async execute(input: EditJobInput): Promise<Job> {
    const now = this.clock.now();
    const { job: reference, schedule, script, ...rest } = input;
    const changes: JobChanges = { ...rest };
    if (schedule !== undefined) changes.schedule = parseSchedule(schedule, now, this.settings.timeZone, this.settings.oneShotGraceMs);
    if (input.deliver !== undefined) parseDeliveryTargets(input.deliver);
    if (script !== undefined) changes.script = script === null ? null : await this.scripts.check(script);
    return this.repository.update(reference, (target) => {
      const edited = editJob(target, changes, now, this.settings.timeZone);
      return { job: edited, result: edited };
    });
  }
}
