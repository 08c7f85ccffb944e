import { inject, injectable } from 'inversify';
import {
  claimJob,
  isDue,
  isMissedOneShot,
  markMissed,
  recoverInterrupted,
  type Job,
} from '../../domain/Job.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { Logger } from '../ports/Logger.js';
import type { ProcessIdentity } from '../ports/ProcessIdentity.js';
import type { CronSettings } from '../ports/Settings.js';
import type { TickLock } from '../ports/TickLock.js';
import { TOKENS } from '../ports/tokens.js';
import { JobExecution, type JobRunReport } from './JobExecution.js';
import { runWithConcurrency } from './runWithConcurrency.js';

export interface TickRun {
  job: Job;
  report: JobRunReport;
}

export interface TickReport {
  /** True when another process held the tick lock; nothing was done. */
  lockBusy: boolean;
  ran: TickRun[];
  /** One-shots found too late, completed without running. */
  missed: Job[];
  /** `running` jobs whose claimant was gone, returned to service. */
  recovered: Job[];
}

export interface TickInput {
  /** Called as each claimed job starts to run, e.g. to show progress on a terminal. */
  onRunStart?: (job: Job) => void;
}

interface Claims {
  due: Job[];
  missed: Job[];
  recovered: Job[];
}

const MIN_STALE_CLAIM_MS = 30 * 60_000;

/**
 * One tick of the scheduler (service-spec "Tick cycle", decisions §4). Under the cross-process
 * tick lock it recovers abandoned runs, settles missed one-shots and claims every due job —
 * persisted before any run starts. The lock is released once the claims are written: claimed
 * jobs are `running`, so no other tick can pick them, and a long run never holds up the next
 * tick. The claimed jobs then run, at most `maxParallelJobs` at a time.
 */
@injectable()
export class RunDueJobs {
  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.TickLock) private readonly tickLock: TickLock,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.ProcessIdentity) private readonly identity: ProcessIdentity,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(JobExecution) private readonly execution: JobExecution,
  ) {}

  async execute(input: TickInput = {}): Promise<TickReport> {
    if (!(await this.anythingToDo())) return { lockBusy: false, ran: [], missed: [], recovered: [] };
    const lease = await this.tickLock.tryAcquire();
    if (!lease) return { lockBusy: true, ran: [], missed: [], recovered: [] };
    let claims: Claims;
    try {
      claims = await this.claimDueJobs(this.clock.now());
    } finally {
      await lease.release();
    }
    for (const job of claims.recovered) this.log.warn(`job '${job.name}' was interrupted and is back in service`, { job: job.id });
    for (const job of claims.missed) this.log.warn(`one-shot job '${job.name}' was missed`, { job: job.id });
    const ran = await runWithConcurrency(claims.due, this.settings.maxParallelJobs, async (job) => {
      this.log.info(`running job '${job.name}'`, { job: job.id });
      input.onRunStart?.(job);
      // A job that waited for a free slot started when its run began, not when the tick did.
      const { report, job: stored } = await this.execution.runClaimed(job, this.clock.now());
      return { job: stored ?? job, report };
    });
    return { lockBusy: false, ran, missed: claims.missed, recovered: claims.recovered };
  }

  /**
   * A lock-free look first: most ticks find nothing due, and then they need neither lock nor
   * write. Anything that becomes due after this look is the next tick's business.
   */
  private async anythingToDo(): Promise<boolean> {
    const now = this.clock.now();
    const { jobs } = await this.repository.load();
    return jobs.some((job) => isDue(job, now) || (job.state === 'running' && this.abandonment(job, now) !== null));
  }

  private claimDueJobs(now: Date): Promise<Claims> {
    const claimant = this.identity.claimant();
    return this.repository.modify((jobs) => {
      const claims: Claims = { due: [], missed: [], recovered: [] };
      let changed = false;
      const next = jobs.map((stored) => {
        let job = stored;
        const abandonment = job.state === 'running' ? this.abandonment(job, now) : null;
        if (abandonment) {
          job = recoverInterrupted(job, abandonment);
          claims.recovered.push(job);
        }
        if (isDue(job, now)) {
          if (isMissedOneShot(job, now)) {
            job = markMissed(job, now);
            claims.missed.push(job);
          } else {
            job = claimJob(job, claimant, now, this.settings.timeZone);
            claims.due.push(job);
          }
        }
        if (job !== stored) changed = true;
        return job;
      });
      return { jobs: changed ? next : jobs, result: claims };
    });
  }

  /** Why a `running` job is considered abandoned, or null while its run may still be going. */
  private abandonment(job: Job, now: Date): string | null {
    if (!job.claim) return 'it was marked running without a claim';
    if (this.identity.isAlive(job.claim.by) === false) {
      return `the process ${job.claim.by} that ran it is gone`;
    }
    const idle = this.settings.idleTimeoutMs;
    if (idle === null) return null;
    const staleAfter = Math.max(3 * idle, MIN_STALE_CLAIM_MS);
    const age = now.getTime() - Date.parse(job.claim.at);
    return age > staleAfter ? `its run started at ${job.claim.at} and never finished` : null;
  }
}
