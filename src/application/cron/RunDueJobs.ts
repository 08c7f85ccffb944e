import { inject, injectable, optional, type ServiceIdentifier } from 'inversify';
import { jobTimeZone, type Job } from '../../domain/Job.js';
import { claimJob, markMissed, recoverInterrupted } from '../../domain/jobLifecycle.js';
import { isMissedOneShot, skipOverdueSlot, skipsOverdueSlot, slotsMissed } from '../../domain/jobCatchUp.js';
import { toIsoUtc } from '../../domain/zonedTime.js';
import { livenessAskedOnce, runAbandonment } from '../../domain/runs/abandonment.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository, TickCandidates, TickSettlement } from '../ports/JobRepository.js';
import type { Logger } from '../ports/Logger.js';
import type { ProcessIdentity } from '../ports/ProcessIdentity.js';
import type { ReplicaLeases } from '../ports/ReplicaLeases.js';
import type { CronSettings } from '../ports/Settings.js';
import type { TickLock } from '../ports/TickLock.js';
import { TOKENS } from '../ports/tokens.js';
import type { JobExecution } from './JobExecution.js';
import type { JobRunReport } from './JobRunReports.js';
import { ABANDONED_RUNS_ON_DEMAND, type AbandonedRuns, type RecoveredRun } from '../runs/AbandonedRuns.js';

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

/** An overdue slot skipped rather than run (catch-up policy `skip`). */
export interface SkippedSlot {
  /** The job as stored after the skip: its next run computed from when the slot was found. */
  job: Job;
  /** The slot skipped: the job's `next_run_at` when it was found. */
  slot: Date;
  /** When the tick found it. */
  foundAt: Date;
  /** The slots that fell between it and the tick, itself included (a large number is capped). */
  missedSlots: number;
  /** Why, as the run ledger's record of the skip says it. */
  reason: string;
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

/** A job claimed for a run, and when its slot was due. */
export interface ClaimedJob {
  job: Job;
  dueAt: Date;
}

export interface Claims {
  /** True when another process held the tick lock; nothing was claimed. */
  lockBusy: boolean;
  claimed: ClaimedJob[];
  /** Due jobs left as they are because no run slot was free. */
  waiting: Job[];
  /**
   * Whether `waiting` holds every job found waiting (up to WAITING_LOOKED_AT), or only those of
   * a light look that read no further than the free slots (false).
   */
  waitingAll: boolean;
  missed: Job[];
  recovered: Job[];
  skipped: SkippedSlot[];
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
}

/** What the lock-free look found: whether a claim is needed, and whether a running job looked abandoned. */
interface Look {
  needed: boolean;
  abandoned: boolean;
  lapsed: ReadonlySet<string>;
}

/** Whether the process that claimed a run lives: ProcessIdentity.isAlive, asked once per claimant and look. */
type Liveness = (claimant: string) => ReturnType<ProcessIdentity['isAlive']>;
/**
 * How many due jobs beyond the free run slots a tick looks at: missed one-shots among them are
 * settled at once, and the rest are reported as waiting for a slot.
 */
const WAITING_LOOKED_AT = 1000;
/**
 * The jobs beyond the free slots are looked at once a second at most: a gateway claims again
 * as each run ends, and reading (and, on a shared store, holding) a thousand waiting jobs at each
 * of those claims would slow every replica's claims and runs. A one-shot missed among them is
 * settled at the next full look, well within its grace.
 */
export const FULL_LOOK_EVERY_MS = 1000;
/** How many missed slots a skip counts at most, for its message (an every-minute job asleep for a month missed 43 200). */
const MISSED_SLOTS_COUNTED = 1000;
const NOTHING: Omit<Claims, 'lockBusy'> = { claimed: [], waiting: [], waitingAll: true, missed: [], recovered: [], skipped: [] };

/**
 * The scheduler's tick (docs/cron.md, The tick). `claim` is the step every
 * trigger shares: under the cross-process tick lock it recovers abandoned runs, settles missed
 * one-shots and claims due jobs, earliest first, as many as there are free run slots — persisted
 * before any run starts. The lock is released once the claims are written: claimed jobs are
 * `running`, so no other tick can pick them, and a long run never holds up the next tick. A due
 * job beyond the free slots is left `scheduled`, so a crash can never lose a slot it never used.
 *
 * `execute` is the command line's tick: it runs the jobs due when it started, at most
 * `maxParallelJobs` at a time, claiming the next as a run ends.
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
    @inject(JOB_EXECUTION_ON_DEMAND) private readonly execution: () => JobExecution,
    @inject(TOKENS.ReplicaLeases) @optional() private readonly leases: ReplicaLeases | undefined = undefined,
    /** The ledger's side of a recovery; without it (tests that build this by hand), the ledger is left as it is. */
    @inject(ABANDONED_RUNS_ON_DEMAND) @optional() private readonly abandonedRuns: (() => AbandonedRuns) | undefined = undefined,
  ) {}

  /** Whether this process settled the ledger's abandoned runs yet: once at its first claim, then at each recovery. */
  private settledLedger = false;
  /** The jobs the last claim recovered, each with the claim it had, for the ledger's settling. */
  private recoveredFrom: RecoveredRun[] = [];

  /** When this process last looked at every waiting job (ms); -Infinity before the first look. */
  private lastFullLookMs = Number.NEGATIVE_INFINITY;

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
        running.set(
          job.id,
          run.then(() => void running.delete(job.id)),
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
    const look = await this.anythingToDo(now, dueBy);
    if (!this.settledLedger && this.abandonedRuns) {
      this.settledLedger = true;
      await this.abandonedRuns().settle();
    }
    if (!look.needed) return { lockBusy: false, ...NOTHING };
    const lease = await this.tickLock.tryAcquire();
    if (!lease) return { lockBusy: true, ...NOTHING };
    let claims: Claims;
    try {
      claims = await this.claimDueJobs(this.clock.now(), dueBy, Math.max(0, input.limit), input.waitedForSlot, look);
    } finally {
      await lease.release();
    }
    for (const job of claims.recovered) this.log.warn(`job '${job.name}' was interrupted and is back in service`, { job: job.id });
    // Its run in the ledger ended with it, and what its process started must not finish it.
    const recoveredFrom = this.recoveredFrom.splice(0);
    if (claims.recovered.length > 0 && this.abandonedRuns) {
      const gone = recoveredFrom.map(({ claim }) => claim.by).filter((by) => this.identity.isAlive(by) === false);
      await this.abandonedRuns().settle(gone, recoveredFrom);
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

  /**
   * A lock-free look first: most ticks find nothing due, and then they need neither lock nor
   * write. Anything that becomes due after this look is the next tick's business.
   */
  private async anythingToDo(now: Date, dueBy: Date): Promise<Look> {
    const { anyDue, running } = await this.repository.peek(dueBy);
    const alive = livenessAskedOnce((by) => this.identity.isAlive(by));
    const lapsed = await this.lapsedClaimants(running, now, alive);
    const abandoned = running.some((job) => this.abandonment(job, now, lapsed, alive) !== null);
    return { needed: anyDue || abandoned, abandoned, lapsed };
  }

  /**
   * The claimants of `running` jobs that this host cannot check and whose gateway's lease lapsed
   * (with a job store shared by several gateways): their runs died with them.
   */
  private async lapsedClaimants(running: readonly Job[], now: Date, alive: Liveness): Promise<ReadonlySet<string>> {
    if (!this.leases) return new Set();
    const claimants = new Set(running.map((job) => job.claim?.by).filter((by): by is string => by !== undefined));
    const unknown = [...claimants].filter((by) => alive(by) === 'unknown');
    return unknown.length === 0 ? new Set() : this.leases.lapsed(unknown, now);
  }

  private claimDueJobs(now: Date, dueBy: Date, limit: number, waitedForSlot: ReadonlySet<string> | undefined, look: Look): Promise<Claims> {
    const claimant = this.identity.claimant();
    const alive = livenessAskedOnce((by) => this.identity.isAlive(by));
    const { lapsed } = look;
    const full = now.getTime() - this.lastFullLookMs >= FULL_LOOK_EVERY_MS || now.getTime() < this.lastFullLookMs;
    if (full) this.lastFullLookMs = now.getTime();
    const settling = ({ running, due }: TickCandidates): TickSettlement<Claims> => {
      const claims: Claims = { lockBusy: false, claimed: [], waiting: [], waitingAll: full, missed: [], recovered: [], skipped: [] };
      const changed: Job[] = [];
      // A settlement may be tried again (a store that retries its transaction): only the last counts.
      this.recoveredFrom = [];
      for (const stored of running) {
        const abandonment = this.abandonment(stored, now, lapsed, alive);
        if (!abandonment) continue;
        const job = recoverInterrupted(stored, abandonment);
        if (stored.claim) this.recoveredFrom.push({ job, claim: stored.claim });
        claims.recovered.push(job);
        changed.push(job);
      }
      for (const job of due) {
        if (!waitedForSlot?.has(job.id) && isMissedOneShot(job, dueBy, this.settings.oneShotGraceMs)) {
          const missed = markMissed(job, now);
          claims.missed.push(missed);
          changed.push(missed);
        } else if (!waitedForSlot?.has(job.id) && skipsOverdueSlot(job, dueBy, this.settings.catchUp, this.settings.oneShotGraceMs)) {
          const skip = this.skip(job, now);
          claims.skipped.push(skip);
          changed.push(skip.job);
        } else if (claims.claimed.length < limit) {
          const claimed = claimJob(job, claimant, now, this.settings.timeZone);
          claims.claimed.push({ job: claimed, dueAt: new Date(job.next_run_at!) });
          changed.push(claimed);
        } else {
          claims.waiting.push(job);
        }
      }
      return { changed, result: claims };
    };
    return this.repository.settleDue(dueBy, limit + (full ? WAITING_LOOKED_AT : 0), settling, { running: look.abandoned });
  }

  /** Skips the overdue slot of `job`, found at `now` (see skipOverdueSlot). */
  private skip(job: Job, now: Date): SkippedSlot {
    const slot = new Date(job.next_run_at!);
    // The job's own zone, where it has one, counts its slots.
    const zone = jobTimeZone(job, this.settings.timeZone);
    const skipped = skipOverdueSlot(job, now, zone);
    const missedSlots = slotsMissed(job.schedule, slot, now, zone, MISSED_SLOTS_COUNTED);
    const counted = missedSlots === 1 ? '1 slot' : `${missedSlots >= MISSED_SLOTS_COUNTED ? 'at least ' : ''}${missedSlots} slots`;
    const reason =
      `skipped: the job was due at ${job.next_run_at} but nothing ran it until ${toIsoUtc(now)} ` +
      `(${counted} missed); with the catch-up policy skip it waits for its next run${skipped.next_run_at ? ` at ${skipped.next_run_at}` : ''}`;
    return { job: skipped, slot, foundAt: now, missedSlots, reason };
  }

  /** Why a `running` job is considered abandoned, or null while its run may still be going (runAbandonment). */
  private abandonment(job: Job, now: Date, lapsed: ReadonlySet<string>, alive: Liveness): string | null {
    if (!job.claim) return 'it was marked running without a claim';
    return runAbandonment(job.claim, job.claim.at, now, alive, lapsed, this.settings.idleTimeoutMs);
  }
}
