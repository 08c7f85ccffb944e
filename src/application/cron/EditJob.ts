import { inject, injectable } from 'inversify';
import { parseDeliveryTargets } from '../../domain/DeliveryTarget.js';
import { checkJobMcpGrants, editJob, jobTimeZone, validateJobTimeZone, type CatchUp, type Job, type JobChanges } from '../../domain/Job.js';
import { isZoneDependentOneShot, parseSchedule } from '../../domain/Schedule.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { ScriptExecutor } from '../ports/ScriptExecutor.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import type { RetryPolicy } from '../../domain/retries.js';
import type { Overlap } from '../../domain/jobCatchUp.js';
import type { WorkingDirectories } from '../ports/WorkingDirectories.js';
import { jobIdsOf } from './CreateJob.js';
import { chainLinksOf, checkJobLinks, scheduleWithLinks, type ChainLinkInput } from './jobChainLinks.js';

export interface EditJobInput {
  job: string;
  schedule?: string;
  /** A new own IANA time zone for the job, or null for the configured one again. */
  timezone?: string | null;
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
  /** New toolsets; null or an empty list for the `agent-cron` preset again. */
  toolsets?: readonly string[] | null;
  /** A new working folder (absolute, or relative to the workspace; it must exist), or null for the workspace again. */
  workdir?: string | null;
  /** Replaces the jobs (by id or name) whose last answers are carried forward; `[]` for none. */
  context_from?: readonly string[];
  /** Whether each run is given this job's own last `ok` answer. */
  continue?: boolean;
  /** Limits to set; one given null is the job's no more. */
  budget?: JobChanges['budget'];
  /** The longest a run may take, in seconds; null (or absent, on create) for no limit. */
  timeout_seconds?: number | null;
  /** Its retries (attempts after the first, first wait, longest wait); null (or absent, on create) follows `cron.retry`. */
  retry?: Partial<RetryPolicy> | null;
  /** What a slot that comes while the run before still runs does; null (or absent) for `skip`. */
  overlap?: Overlap | null;
  /** Replaces the jobs whose runs' ends start this job; `[]` for none. */
  after?: readonly ChainLinkInput[];
}

/**
 * Changes a job's configuration; unspecified fields stay as they are. A new name another job
 * has is refused (checked under the store's lock, like a create). A schedule is read in the
 * job's zone as it stands after the edit; a new zone alone reads a one-shot written without an
 * offset again in it (unless the job has completed), as `--schedule` with the same time would.
 */
@injectable()
export class EditJob {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.ScriptExecutor) private readonly scripts: ScriptExecutor,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.WorkingDirectories) private readonly workdirs: WorkingDirectories,
  ) {}

  async execute(input: EditJobInput): Promise<Job> {
    const now = this.clock.now();
    const { job: reference, schedule, script, timezone, workdir, context_from: contextFrom, after: afterInput, ...rest } = input;
    const after = afterInput === undefined ? undefined : await chainLinksOf(this.repository, afterInput);
    // Links or a schedule changed: the chain is checked against the jobs as this write leaves them, under the store's lock.
    const check =
      after === undefined && schedule === undefined ? undefined : (job: Job, all: readonly Job[]) => void checkJobLinks(all, job);
    const changes: JobChanges = { ...rest };
    if (workdir !== undefined) changes.workdir = workdir === null ? null : await this.workdirs.check(workdir);
    if (contextFrom !== undefined) changes.context_from = await jobIdsOf(this.repository, contextFrom);
    if (timezone !== undefined) changes.timezone = validateJobTimeZone(timezone);
    if (input.deliver !== undefined) parseDeliveryTargets(input.deliver);
    checkJobMcpGrants(input.toolsets, this.settings.mcpServers ?? []);
    if (script !== undefined) changes.script = script === null ? null : await this.scripts.check(script);
    const { timeZone: configuredZone, oneShotGraceMs } = this.settings;
    return this.repository.update(
      reference,
      (target) => {
        // Which zone the schedule is read in depends on the job: read under the store's lock.
        const zone = changes.timezone !== undefined ? (changes.timezone ?? configuredZone) : jobTimeZone(target, configuredZone);
        const rezoned =
          zone !== jobTimeZone(target, configuredZone) && target.state !== 'completed' && isZoneDependentOneShot(target.schedule);
        const written = schedule ?? (rezoned ? target.schedule.expr : undefined);
        const parse = (text: string) => parseSchedule(text, now, zone, oneShotGraceMs);
        const links = after ?? target.after ?? [];
        const newSchedule =
          written === undefined ? undefined : schedule === undefined ? parse(written) : scheduleWithLinks(written, links, parse);
        const edited = editJob(target, newSchedule === undefined ? changes : { ...changes, schedule: newSchedule }, now, configuredZone);
        const linked = check ? { ...edited, after: links } : edited;
        return { job: linked, result: linked };
      },
      check,
    );
  }
}
