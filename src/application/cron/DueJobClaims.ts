import { inject, injectable } from 'inversify';
import { jobTimeZone, type Job, type JobClaim } from '../../domain/Job.js';
import { claimJob, isDue, markMissed, recoverInterrupted } from '../../domain/jobLifecycle.js';
import { claimBeside, claimsOf, endOwnRun } from '../../domain/jobRunsBeside.js';
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
      running.flatMap((job) => claimsOf(job).map((claim) => claim.by)),
      now,
    );
    const abandoned = running.some((job) => this.abandonedClaims(job, now, lapsed, alive).length > 0);
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
    aheadMs = 0,
  ): Promise<LockedClaims | null> {
    const lease = await this.tickLock.tryAcquire();
    if (!lease) return null;
    try {
      return await this.claimDueJobs(this.clock.now(), dueBy, limit, waitedForSlot, look, aheadMs);
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
    aheadMs: number,
  ): Promise<LockedClaims> {
    const claimant = this.claimants.self();
    const alive = this.claimants.liveness();
    const { lapsed } = look;
    const full = now.getTime() - this.lastFullLookMs >= FULL_LOOK_EVERY_MS || now.getTime() < this.lastFullLookMs;
    if (full) this.lastFullLookMs = now.getTime();
    let recoveredFrom: RecoveredRun[] = [];
    // Jobs due up to here are claimed; those not due by `dueBy` are claimed ahead, as at their slots.
    const claimBy = new Date(dueBy.getTime() + aheadMs);
    const settling = ({ running, due }: TickCandidates): TickSettlement<Claims> => {
      const claims: Claims = { lockBusy: false, claimed: [], waiting: [], waitingAll: full, missed: [], recovered: [], skipped: [] };
      // By id: a job running with runs beside allowed (overlap `allow`) may be recovered and claimed at once.
      const changed = new Map<string, Job>();
      // A settlement may be tried again (a store that retries its transaction): only the last counts.
      recoveredFrom = [];
      for (const stored of running) {
        const abandoned = this.abandonedClaims(stored, now, lapsed, alive);
        if (abandoned.length === 0) continue;
        let job = stored;
        for (const { claim, reason } of abandoned) {
          // Each run of the job on its own (domain/jobRunsBeside.ts): the others go on.
          job = claim ? endOwnRun(job, claim, (each) => recoverInterrupted(each, reason)) : recoverInterrupted(job, reason);
          if (claim) recoveredFrom.push({ job, claim });
        }
        claims.recovered.push(job);
        changed.set(job.id, job);
      }
      for (const found of due) {
        const job = changed.get(found.id) ?? found;
        const slot = new Date(job.next_run_at!);
        if (job.state === 'running') {
          // Due while it runs: a slot of a job whose runs may overlap (runsBeside), claimed beside its run.
          if (!isDue(job, claimBy)) continue;
          if (claims.claimed.length >= limit) {
            if (isDue(job, dueBy)) claims.waiting.push(job);
            continue;
          }
          // Due within `aheadMs`: claimed as at its slot (below).
          const { stored, run } = claimBeside(job, claimant, slot > now ? slot : now, this.settings.timeZone);
          claims.claimed.push({ job: run, dueAt: slot });
          changed.set(stored.id, stored);
          continue;
        }
        if (!isDue(job, dueBy)) {
          // Due within `aheadMs`: claimed now, as at its slot, to start at the slot (docs/gateway.md).
          if (claims.claimed.length >= limit) continue;
          const claimed = claimJob(job, claimant, slot, this.settings.timeZone);
          claims.claimed.push({ job: claimed, dueAt: slot });
          changed.set(claimed.id, claimed);
        } else if (!waitedForSlot?.has(job.id) && isMissedOneShot(job, dueBy, this.settings.oneShotGraceMs)) {
          const missed = markMissed(job, now);
          claims.missed.push(missed);
          changed.set(missed.id, missed);
        } else if (!waitedForSlot?.has(job.id) && skipsOverdueSlot(job, dueBy, this.settings.catchUp, this.settings.oneShotGraceMs)) {
          const skip = this.skip(job, now);
          claims.skipped.push(skip);
          changed.set(skip.job.id, skip.job);
        } else if (claims.claimed.length < limit) {
          const claimed = claimJob(job, claimant, now, this.settings.timeZone);
          claims.claimed.push({ job: claimed, dueAt: new Date(job.next_run_at!) });
          changed.set(claimed.id, claimed);
        } else {
          claims.waiting.push(job);
        }
      }
      return { changed: [...changed.values()], result: claims };
    };
    const claims = await this.repository.settleDue(claimBy, limit + (full ? WAITING_LOOKED_AT : 0), settling, { running: look.abandoned });
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

  /**
   * The runs of a `running` job that are abandoned, each by its claim and why (runAbandonment);
   * empty while every one may still be going. A job marked running with no claim at all is
   * abandoned as a whole (claim null).
   */
  private abandonedClaims(
    job: Job,
    now: Date,
    lapsed: ReadonlySet<string>,
    alive: ClaimantLiveness,
  ): Array<{ claim: JobClaim | null; reason: string }> {
    const claims = claimsOf(job);
    if (claims.length === 0) return [{ claim: null, reason: 'it was marked running without a claim' }];
    return claims.flatMap((claim) => {
      const reason = runAbandonment(claim, claim.at, now, alive, lapsed, this.settings.idleTimeoutMs);
      return reason === null ? [] : [{ claim, reason }];
    });
  }
}
