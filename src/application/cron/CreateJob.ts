import { inject, injectable } from 'inversify';
import { parseDeliveryTargets } from '../../domain/DeliveryTarget.js';
import {
  checkJobMcpGrants,
  createJob,
  validateJobTimeZone,
  type CatchUp,
  type Job,
  type JobBudget,
  type JobOrigin,
} from '../../domain/Job.js';
import { findJob } from '../../domain/jobLookup.js';
import { chainLinksOf, checkJobLinks, scheduleWithLinks, type ChainLinkInput } from './jobChainLinks.js';
import { parseSchedule } from '../../domain/Schedule.js';
import type { Clock } from '../ports/Clock.js';
import type { IdGenerator } from '../ports/IdGenerator.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { ScriptExecutor } from '../ports/ScriptExecutor.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import type { RetryPolicy } from '../../domain/retries.js';
import type { Overlap } from '../../domain/jobCatchUp.js';
import type { WorkingDirectories } from '../ports/WorkingDirectories.js';

export interface CreateJobInput {
  /** Empty (or `after`) with `after` links: the job runs only after other jobs. */
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
  no_agent?: boolean;
  /** Toolsets instead of the `agent-cron` preset; null, absent or empty for the preset. */
  toolsets?: readonly string[] | null;
  /** The working folder: absolute, or relative to the workspace; it must exist. Null or absent for the workspace. */
  workdir?: string | null;
  /** Jobs (by id or name) whose last `ok` answer each run is given as context. */
  context_from?: readonly string[];
  /** Give each run this job's own last `ok` answer as context. */
  continue?: boolean;
  /** The job's own limits; absent or null: `agent.budget`'s. */
  budget?: JobBudget | null;
  /** The longest a run may take, in seconds; null (or absent, on create) for no limit. */
  timeout_seconds?: number | null;
  /** Its retries (attempts after the first, first wait, longest wait); null (or absent, on create) follows `cron.retry`. */
  retry?: Partial<RetryPolicy> | null;
  /** What a slot that comes while the run before still runs does; null (or absent) for `skip`. */
  overlap?: Overlap | null;
  /** Jobs whose runs' ends start this job (`job[:ok|failed|any]`, or `{job, on}`); absent or empty for none. */
  after?: readonly ChainLinkInput[];
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
    @inject(TOKENS.WorkingDirectories) private readonly workdirs: WorkingDirectories,
  ) {}

  async execute(input: CreateJobInput): Promise<Job> {
    const now = this.clock.now();
    const timezone = validateJobTimeZone(input.timezone);
    const after = await chainLinksOf(this.repository, input.after ?? []);
    const schedule = scheduleWithLinks(input.schedule, after, (text) =>
      parseSchedule(text, now, timezone ?? this.settings.timeZone, this.settings.oneShotGraceMs),
    );
    if (input.deliver) parseDeliveryTargets(input.deliver);
    checkJobMcpGrants(input.toolsets, this.settings.mcpServers ?? []);
    const script = input.script ? await this.scripts.check(input.script) : null;
    const workdir = input.workdir ? await this.workdirs.check(input.workdir) : null;
    const contextFrom = await jobIdsOf(this.repository, input.context_from);
    const created = createJob(
      { ...input, id: this.ids.jobId(), schedule, timezone, script, skills: input.skills ?? [], workdir, context_from: contextFrom },
      now,
      this.settings.timeZone,
    );
    const nameWasChosen = Boolean(input.name?.trim());
    if (after.length === 0) return this.repository.create(created, nameWasChosen);
    // The chain is checked against the jobs as this write leaves them, under the store's lock.
    return this.repository.create({ ...created, after }, nameWasChosen, (job, all) => void checkJobLinks(all, job));
  }
}

/** The ids of the jobs `references` name (by id or name, as every job reference), in order; one naming none is refused. */
export async function jobIdsOf(repository: JobRepository, references: readonly string[] | undefined): Promise<string[]> {
  if (!references || references.length === 0) return [];
  const { jobs, unreadable } = await repository.load();
  return references.map((reference) => findJob(jobs, reference, unreadable).id);
}
