import { inject, injectable } from 'inversify';
import { jobTimeZone, type CatchUp, type Job } from '../../domain/Job.js';
import { followersOf, type ChainFollower } from '../../domain/jobChains.js';
import { findJob } from '../../domain/jobLookup.js';
import { upcomingRuns } from '../../domain/jobDetails.js';
import type { RunTotals } from '../../domain/runs/runTotals.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { RunOutputStore } from '../ports/RunOutputStore.js';
import type { RunLedger } from '../ports/RunLedger.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { recentRuns, type JobRun } from './jobRuns.js';

/** How many coming run times `agent cron show` lists for a recurring job. */
export const SHOWN_NEXT_RUNS = 5;
/** How many past runs `agent cron show` lists. */
export const SHOWN_RECENT_RUNS = 5;

export interface ShowJobOutput {
  job: Job;
  /** The zone the times are meant to be shown in: the job's own, else the configured one. */
  timeZone: string;
  /** The configured zone (`timezone`, AGENT_TIMEZONE, the system's), which a job without its own uses; `timeZone` when not given. */
  configuredTimeZone?: string;
  /** The next run times of a recurring job that is scheduled; empty otherwise. */
  nextRuns: Date[];
  /** The newest runs, newest first, from the job's reports. */
  recentRuns: JobRun[];
  /** The configured catch-up policy (`cron.catch_up`), which a job without its own follows; `once` when absent. */
  catchUp?: CatchUp;
  /** The names of the jobs its `context_from` names, by id (a job removed since is not among them). */
  jobNames?: Readonly<Record<string, string>>;
  /** The jobs that run after this one (docs/cron.md, Chains). */
  followers?: ChainFollower[];
  /** What the job's runs spent in the last 24 hours and the last 30 days (docs/runs.md); absent when the ledger could not say. */
  spent?: { day: RunTotals; month: RunTotals };
}

/** `agent cron show <job>`: one job in full, its coming runs and its last runs. Reads only. */
@injectable()
export class ShowJob {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.RunOutputStore) private readonly outputs: RunOutputStore,
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  /** Throws JOB.NOT_FOUND (or JOB.AMBIGUOUS) when `job` names no single job. */
  async execute(input: { job: string }): Promise<ShowJobOutput> {
    const { jobs, unreadable } = await this.repository.load();
    const job = findJob(jobs, input.job, unreadable);
    const configuredTimeZone = this.settings.timeZone;
    return {
      job,
      timeZone: jobTimeZone(job, configuredTimeZone),
      configuredTimeZone,
      nextRuns: upcomingRuns(job, SHOWN_NEXT_RUNS, configuredTimeZone),
      recentRuns: await recentRuns(this.outputs, this.ledger, job, configuredTimeZone, SHOWN_RECENT_RUNS),
      catchUp: this.settings.catchUp ?? 'once',
      jobNames: Object.fromEntries(
        jobs
          .filter((other) => (job.context_from ?? []).includes(other.id) || (job.after ?? []).some((link) => link.job === other.id))
          .map((other) => [other.id, other.name]),
      ),
      followers: followersOf(jobs, job.id).map(({ job: follower, on }) => ({ id: follower.id, name: follower.name, on })),
      ...(await this.spentBy(job)),
    };
  }

  private async spentBy(job: Job): Promise<Pick<ShowJobOutput, 'spent'>> {
    const now = this.clock.now().getTime();
    const since = (days: number) => new Date(now - days * 86_400_000);
    try {
      const [day, month] = await Promise.all([
        this.ledger.spentSince({ kind: 'cron', subject: job.id, since: since(1) }),
        this.ledger.spentSince({ kind: 'cron', subject: job.id, since: since(30) }),
      ]);
      return { spent: { day, month } };
    } catch {
      return {};
    }
  }
}
