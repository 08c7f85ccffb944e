import { inject, injectable } from 'inversify';
import { parseDeliveryTargets } from '../../domain/DeliveryTarget.js';
import { createJob, validateJobTimeZone, type CatchUp, type Job, type JobBudget, type JobOrigin } from '../../domain/Job.js';
import { parseSchedule } from '../../domain/Schedule.js';
import type { Clock } from '../ports/Clock.js';
import type { IdGenerator } from '../ports/IdGenerator.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { ScriptExecutor } from '../ports/ScriptExecutor.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';

export interface CreateJobInput {
  schedule: string;
  prompt: string;
  /** The job's own IANA time zone; null or absent for the configured one. */
  timezone?: string | null;
  name?: string | null;
  deliver?: string | null;
  skills?: readonly string[];
  script?: string | null;
  repeat?: number | null;
  model?: string | null;
  provider?: string | null;
  origin?: JobOrigin | null;
  /** What an overdue slot does; null or absent follows `cron.catch_up`. */
  catch_up?: CatchUp | null;
  /** Run only the pre-run script and deliver its output, without the agent (needs a script). */
  no_agent?: boolean; /** The job's own limits; absent or null: `agent.budget`'s. */
  budget?: JobBudget | null;
}

/**
 * Creates a job in state `scheduled`; nothing is written when any input is invalid. A chosen
 * name another job has is refused; a default name another job has gets " (2)", " (3)" …,
 * decided under the store's lock so that two creates at once cannot take the same name.
 */
@injectable()
export class CreateJob {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.IdGenerator) private readonly ids: IdGenerator,
    @inject(TOKENS.ScriptExecutor) private readonly scripts: ScriptExecutor,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
  ) {}

  async execute(input: CreateJobInput): Promise<Job> {
    const now = this.clock.now();
    const timezone = validateJobTimeZone(input.timezone);
    const schedule = parseSchedule(input.schedule, now, timezone ?? this.settings.timeZone, this.settings.oneShotGraceMs);
    if (input.deliver) parseDeliveryTargets(input.deliver);
    const script = input.script ? await this.scripts.check(input.script) : null;
    const job = createJob(
      { ...input, id: this.ids.jobId(), schedule, timezone, script, skills: input.skills ?? [] },
      now,
      this.settings.timeZone,
    );
    const nameWasChosen = Boolean(input.name?.trim());
    return this.repository.create(job, nameWasChosen);
  }
}
