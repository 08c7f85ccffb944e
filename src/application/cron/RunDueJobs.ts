import { cronRunId } from '../../domain/runs/RunRecord.js';
import { runKeyOf } from '../../domain/jobRunsBeside.js';
import { inject, injectable, optional, type ServiceIdentifier } from 'inversify';
import type { Job } from '../../domain/Job.js';
import { toIsoUtc } from '../../domain/zonedTime.js';
import type { Clock } from '../ports/Clock.js';
import type { Logger } from '../ports/Logger.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import type { JobExecution } from './JobExecution.js';
import type { JobRunReport } from './JobRunReports.js';
import { ABANDONED_RUNS_ON_DEMAND, type AbandonedRuns } from '../runs/AbandonedRuns.js';
import { DueJobClaims, type Claims, type SkippedSlot } from './DueJobClaims.js';

export type { ClaimedJob, Claims, SkippedSlot } from './DueJobClaims.js';

/**
 * JobExecution, built the first time a tick has a job to run: its object graph (runner, senders,
 * ledger …) is most of what a command builds, and a command's look for due jobs mostly finds none.
 */
export const JOB_EXECUTION_ON_DEMAND: ServiceIdentifier<() => JobExecution> = Symbol.for('JobExecutionOnDemand');

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
  /** Overdue slots of recurring jobs skipped by the catch-up policy `skip`. */
  skipped: SkippedSlot[];
}

export interface TickInput {
  /** Called as each claimed job starts to run, e.g. to show progress on a terminal. */
  onRunStart?: (job: Job) => void;
  /**
   * Stops the tick (a command stopped by a signal): no job is claimed any more, and the runs under
   * way are cancelled, their trees killed and their runs recorded `interrupted:` (JobExecution).
   */
  signal?: AbortSignal;
}

export interface ClaimInput {
  /** How many jobs may be claimed: the run slots free right now. */
  limit: number;
  /**
   * Only jobs due at or before this instant; default: now. A one-shot is judged missed as of this
   * instant too: one that was due when a tick began and then waited for a slot is not missed.
   */
  dueBy?: Date;
  /**
   * Jobs the caller saw due while every slot was busy: late because of the bound, not because
   * nothing was running, so never judged missed.
   */
  waitedForSlot?: ReadonlySet<string>;
  /**
   * Jobs due up to this many ms after `dueBy` are claimed too, dated at their slots: their runs
   * get ready now and start at their slots (the gateway's, docs/gateway.md). 0 when absent.
   */
  aheadMs?: number;
}

const NOTHING: Omit<Claims, 'lockBusy'> = { claimed: [], waiting: [], waitingAll: true, missed: [], recovered: [], skipped: [] };

/**
 * The scheduler's tick (docs/cron.md, The tick). `claim` is the step every
 * trigger shares: under the cross-process tick lock it recovers abandoned runs, settles missed
 * one-shots and claims due jobs, earliest first, as many as there are free run slots — persisted
 * before any run starts. The lock is released once the claims are written: claimed jobs are
 * `running`, so no other tick can pick them, and a long run never holds up the next tick. A due
 * job beyond the free slots is left `scheduled`, so a crash can never lose a slot it never used.
 * DueJobClaims decides and writes all that in the store; this logs it, settles the run ledger's
 * side of a recovery (AbandonedRuns) and records the skipped slots.
 *
 * `execute` is the command line's tick: it runs the jobs due when it started, at most
 * `maxParallelJobs` at a time, claiming the next as a run ends.
 */
@injectable()
export class RunDueJobs {
  constructor(
    @inject(DueJobClaims) private readonly dueJobs: DueJobClaims,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(JOB_EXECUTION_ON_DEMAND) private readonly execution: () => JobExecution,
    /** The ledger's side of a recovery; without it (tests that build this by hand), the ledger is left as it is. */
    @inject(ABANDONED_RUNS_ON_DEMAND) @optional() private readonly abandonedRuns: (() => AbandonedRuns) | undefined = undefined,
  ) {}

  /** Whether this process settled the ledger's abandoned runs yet: once at its first claim, then at each recovery. */
  private settledLedger = false;

  async execute(input: TickInput = {}): Promise<TickReport> {
    const dueBy = this.clock.now();
    const report: TickReport = { lockBusy: false, ran: [], missed: [], recovered: [], skipped: [] };
    const runs: Promise<TickRun>[] = [];
    const running = new Map<string, Promise<void>>();
    for (;;) {
      const claims = await this.claim({ limit: input.signal?.aborted ? 0 : this.settings.maxParallelJobs - running.size, dueBy });
      if (claims.lockBusy && runs.length === 0) return { ...report, lockBusy: true };
      report.missed.push(...claims.missed);
      report.recovered.push(...claims.recovered);
      report.skipped.push(...claims.skipped);
      for (const { job, dueAt } of claims.claimed) {
        this.log.info(`running job '${job.name}'`, { job: job.id });
        input.onRunStart?.(job);
        const run = this.execution()
          .runClaimed(job, this.clock.now(), { slot: dueAt, signal: input.signal })
          .then(({ report: outcome, job: stored }) => ({ job: stored ?? job, report: outcome }));
        runs.push(run);
        // By run: a job's runs may overlap (overlap `allow`).
        const key = runKeyOf(job);
        running.set(
          key,
          run.then(() => void running.delete(key)),
        );
      }
      if (running.size === 0) return { ...report, ran: await Promise.all(runs) };
      // A run ended: its slot may take a job that was waiting.
      await Promise.race(running.values());
    }
  }

  /** Claims up to `limit` due jobs (see the class comment). Reports, not logs, what it did. */
  async claim(input: ClaimInput): Promise<Claims> {
    const now = this.clock.now();
    const dueBy = input.dueBy ?? now;
    const aheadMs = input.aheadMs ?? 0;
    const look = await this.dueJobs.look(now, new Date(dueBy.getTime() + aheadMs));
    if (!this.settledLedger && this.abandonedRuns) {
      this.settledLedger = true;
      await this.abandonedRuns().settle();
    }
    if (!look.needed) return { lockBusy: false, ...NOTHING };
    const locked = await this.dueJobs.claimUnderLock(dueBy, Math.max(0, input.limit), input.waitedForSlot, look, aheadMs);
    if (!locked) return { lockBusy: true, ...NOTHING };
    const { claims, recoveredFrom } = locked;
    for (const job of claims.recovered) this.log.warn(`job '${job.name}' was interrupted and is back in service`, { job: job.id });
    // Its run in the ledger ended with it, and what its process started must not finish it.
    const settled =
      claims.recovered.length > 0 && this.abandonedRuns
        ? await this.abandonedRuns().settle(this.dueJobs.goneClaimants(recoveredFrom), recoveredFrom)
        : [];
    // A run cut short ended all the same, failed: the jobs that run after it start (docs/cron.md, Chains).
    for (const { job, claim } of recoveredFrom) {
      const record = settled.find(
        (run) => run.kind === 'cron' && run.subject === job.id && Date.parse(run.started_at) >= Date.parse(claim.at),
      );
      await this.execution().interrupted(job, record?.id ?? cronRunId(job.id, new Date(claim.at)));
    }
    for (const job of claims.missed) this.log.warn(`one-shot job '${job.name}' was missed`, { job: job.id });
    for (const skip of claims.skipped) {
      this.log.info(
        `job '${skip.job.name}' skipped its overdue slot of ${toIsoUtc(skip.slot)} (catch-up policy skip); next run at ${skip.job.next_run_at ?? 'none'}`,
        {
          job: skip.job.id,
          missed_slots: skip.missedSlots,
        },
      );
      await this.execution().recordSkipped(skip.job, skip.slot, skip.foundAt, skip.reason);
    }
    return claims;
  }
}
