import { inject, injectable } from 'inversify';
import { jobTimeZone, type Job } from '../../domain/Job.js';
import { claimJob, markMissed, recoverInterrupted } from '../../domain/jobLifecycle.js';
import { isMissedOneShot, skipOverdueSlot, skipsOverdueSlot, slotsMissed } from '../../domain/jobCatchUp.js';
import { runAbandonment, type ClaimantLiveness } from '../../domain/runs/abandonment.js';
import { toIsoUtc } from '../../domain/zonedTime.js';
import type { Clock } from '../ports/Clock.js';
import type { JobRepository, TickCandidates, TickSettlement } from '../ports/JobRepository.js';
import type { CronSettings } from '../ports/Settings.js';
import type { TickLock } from '../ports/TickLock.js';
import { TOKENS } from '../ports/tokens.js';
import type { RecoveredRun } from '../runs/AbandonedRuns.js';
import { RunClaimants } from '../runs/RunClaimants.js';

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

/** What the lock-free look found: whether a claim is needed, and whether a running job looked abandoned. */
export interface DueLook {
  needed: boolean;
  abandoned: boolean;
  lapsed: ReadonlySet<string>;
}

/** What a claim under the tick lock wrote, and the claims the jobs it recovered had, for the ledger's settling. */
export interface LockedClaims {
  claims: Claims;
  recoveredFrom: RecoveredRun[];
}

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

/**
 * The job store's side of the tick's claim (docs/cron.md, The tick): a lock-free look for
 * anything to do, then, under the cross-process tick lock, one settlement of the store that
 * recovers abandoned runs, settles missed one-shots, skips overdue slots (catch-up policy `skip`)
 * and claims due jobs, earliest first, up to the free run slots. It decides and writes; RunDueJobs
 * reports what it did and runs what it claimed.
 */
@injectable()
export class DueJobClaims {
  /** When this process last looked at every waiting job (ms); -Infinity before the first look. */
  private lastFullLookMs = Number.NEGATIVE_INFINITY;

  constructor(
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.TickLock) private readonly tickLock: TickLock,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(RunClaimants) private readonly claimants: RunClaimants,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
  ) {}

  /**
   * A lock-free look first: most ticks find nothing due, and then they need neither lock nor
   * write. Anything that becomes due after this look is the next tick's business.
   */
  async look(now: Date, dueBy: Date): Promise<DueLook> {
    const { anyDue, running } = await this.repository.peek(dueBy);
    const { alive, lapsed } = await this.claimants.look(
      running.map((job) => job.claim?.by),
      now,
    );
    const abandoned = running.some((job) => this.abandonment(job, now, lapsed, alive) !== null);
    return { needed: anyDue || abandoned, abandoned, lapsed };
  }

  /**
   * Claims up to `limit` jobs due by `dueBy` under the tick lock, as of the moment the lock was
   * taken; null when another process holds the lock. The lock is released once the claims are
   * written: claimed jobs are `running`, so no other tick can pick them.
   */
  async claimUnderLock(
    dueBy: Date,
    limit: number,
    waitedForSlot: ReadonlySet<string> | undefined,
    look: DueLook,
  ): Promise<LockedClaims | null> {
    const lease = await this.tickLock.tryAcquire();
    if (!lease) return null;
    try {
      return await this.claimDueJobs(this.clock.now(), dueBy, limit, waitedForSlot, look);
    } finally {
      await lease.release();
    }
  }

  /** Of the claims recovered jobs had, the claimants known dead on this host. */
  goneClaimants(recoveredFrom: readonly RecoveredRun[]): string[] {
    return recoveredFrom.map(({ claim }) => claim.by).filter((by) => this.claimants.isAlive(by) === false);
  }

  private async claimDueJobs(
    now: Date,
    dueBy: Date,
    limit: number,
    waitedForSlot: ReadonlySet<string> | undefined,
    look: DueLook,
  ): Promise<LockedClaims> {
    const claimant = this.claimants.self();
    const alive = this.claimants.liveness();
    const { lapsed } = look;
    const full = now.getTime() - this.lastFullLookMs >= FULL_LOOK_EVERY_MS || now.getTime() < this.lastFullLookMs;
    if (full) this.lastFullLookMs = now.getTime();
    let recoveredFrom: RecoveredRun[] = [];
    const settling = ({ running, due }: TickCandidates): TickSettlement<Claims> => {
      const claims: Claims = { lockBusy: false, claimed: [], waiting: [], waitingAll: full, missed: [], recovered: [], skipped: [] };
      const changed: Job[] = [];
      // A settlement may be tried again (a store that retries its transaction): only the last counts.
      recoveredFrom = [];
      for (const stored of running) {
        const abandonment = this.abandonment(stored, now, lapsed, alive);
        if (!abandonment) continue;
        const job = recoverInterrupted(stored, abandonment);
        if (stored.claim) recoveredFrom.push({ job, claim: stored.claim });
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
    const claims = await this.repository.settleDue(dueBy, limit + (full ? WAITING_LOOKED_AT : 0), settling, { running: look.abandoned });
    return { claims, recoveredFrom };
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
  private abandonment(job: Job, now: Date, lapsed: ReadonlySet<string>, alive: ClaimantLiveness): string | null {
    if (!job.claim) return 'it was marked running without a claim';
    return runAbandonment(job.claim, job.claim.at, now, alive, lapsed, this.settings.idleTimeoutMs);
  }
}
