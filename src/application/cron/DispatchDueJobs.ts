import { runKeyOf } from '../../domain/jobRunsBeside.js';
import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import type { Logger } from '../ports/Logger.js';
import type { CronSettings } from '../ports/Settings.js';
import type { Timer } from '../ports/Timer.js';
import { TOKENS } from '../ports/tokens.js';
import { errorText } from '../../domain/errors.js';
import { STARTS_PER_TURN } from '../../domain/PermitPool.js';
import { DispatchedRuns } from './DispatchedRuns.js';
import { RunDueJobs, type ClaimedJob, type TickRun } from './RunDueJobs.js';

/** How long cancelled runs get to record themselves as interrupted before stop() gives up on them. */
export const ABORT_WAIT_MS = 5000;

export interface DispatchResult {
  /** Another process held the tick lock: nothing was claimed; look again shortly. */
  lockBusy: boolean;
  /** Due jobs left waiting because every run slot was busy; a run's end starts them. */
  waiting: number;
}

interface RunInProgress {
  job: Job;
  abort: AbortController;
  done: Promise<void>;
}

/**
 * The gateway's side of the tick (docs/gateway.md): claims due jobs for the free run slots
 * (`cron.max_parallel_jobs`) and starts their runs without waiting for them, so a long run never
 * holds up a job that becomes due meanwhile. A due job beyond the slots stays `scheduled` until a
 * run ends; when it starts more than a second late, its lateness is logged. How a run starts and
 * ends, its answer in the slot or in the platforms' lanes, is DispatchedRuns'.
 *
 * Whoever decides *when* to look (the trigger: timers, the store watch, a run's end) calls
 * `dispatch`; calls are serialised here, and with the claims of fires (`claimWith`), which
 * otherwise go on side by side. `stop` stops claiming at once, lets the runs finish for
 * the grace period, then cancels the rest: their process trees are killed and their jobs
 * recorded `interrupted:`.
 */
@injectable()
export class DispatchDueJobs {
  private readonly runs = new Map<string, RunInProgress>();
  /** Jobs already reported as waiting for a slot, so the report is made once. */
  private readonly reportedWaiting = new Set<string>();
  private readonly releasedListeners: Array<(jobId: string) => void> = [];
  /** Jobs claimed by a fire while every run slot was busy: they start, first come first, as runs end. */
  private readonly claimedWaiting: ClaimedJob[] = [];
  /** This dispatcher's own claims, one after the other; each also waits for the callers' claims made before it. */
  private claiming: Promise<DispatchResult> = Promise.resolve({ lockBusy: false, waiting: 0 });
  /** Callers' claims (fires) under way, each settled (never rejected) once its run is started or queued. */
  private readonly callerClaims = new Set<Promise<void>>();
  private accepting = true;

  constructor(
    @inject(RunDueJobs) private readonly tick: RunDueJobs,
    /** How each claimed job's run starts and ends: its lateness, its metrics, its answer's way out. */
    @inject(DispatchedRuns) private readonly dispatched: DispatchedRuns,
    @inject(TOKENS.Timer) private readonly timer: Timer,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /** How far ahead of their slots due jobs are claimed (ms; `cron` settings); their runs start at their slots. */
  get claimAheadMs(): number {
    return this.settings.claimAheadMs ?? 0;
  }

  /** How many runs are in progress. */
  get inProgress(): number {
    return this.runs.size;
  }

  /**
   * Called with each run as it ends, with its report: once its answer was delivered (or at once,
   * for a run with nothing to deliver). Its slot was freed before (`onJobReleased`).
   */
  onRunFinished(listener: (run: TickRun) => void): void {
    this.dispatched.onFinished(listener);
  }

  /**
   * Called with a job's id each time one of its runs frees its slot: the run is counted and the
   * job released in the store (its next slot there), its answer recorded and, in the gateway,
   * perhaps still waiting for its delivery. A `dispatch` it prompts can use the slot.
   */
  onJobReleased(listener: (jobId: string) => void): void {
    this.releasedListeners.push(listener);
  }

  /**
   * Claims due jobs for the free slots and starts them; resolves once they are started. It claims
   * after the callers' claims made before it have started or queued their runs, and callers'
   * claims made meanwhile wait for it, so the free slots it counts are the free slots.
   */
  dispatch(): Promise<DispatchResult> {
    // After the turn before, however it ended: a claim that failed (the store away) rejects its
    // own dispatch, never the ones after it.
    const callersBefore = [...this.callerClaims];
    this.claiming = this.afterClaims().then(async () => {
      await Promise.all(callersBefore);
      return this.claimAndStart();
    });
    return this.claiming;
  }

  /** Settles once the claims under way did, whether they worked or not. */
  private afterClaims(): Promise<unknown> {
    return this.claiming.catch(() => undefined);
  }

  /**
   * Makes a claim of the caller's (a fire's compare-and-set) in turn with this dispatcher's own,
   * and runs the job it claimed in a run slot like the rest: when every slot is busy the run waits
   * for one, ahead of due jobs not yet claimed. Callers' claims do not wait for each other: the
   * store decides which of several claims of one slot wins, and claims of many slots share its
   * writes. Resolves with the claim's result, or null without calling `claim` once stopping;
   * rejects when `claim` does.
   */
  claimWith<T>(claim: () => Promise<{ claimed: ClaimedJob | null; result: T }>): Promise<T | null> {
    const turn = this.afterClaims().then(async () => {
      if (!this.accepting) return null;
      const { claimed, result } = await claim();
      if (claimed) this.startOrQueue(claimed);
      return result;
    });
    const settled = turn.then(
      () => undefined,
      () => undefined,
    );
    this.callerClaims.add(settled);
    void settled.then(() => this.callerClaims.delete(settled));
    return turn;
  }

  /**
   * Stops claiming, waits up to `graceMs` for the runs in progress, then cancels the rest and
   * waits up to `abortWaitMs` for them to be recorded. Resolves true when all finished in time.
   */
  async stop(graceMs: number, abortWaitMs = ABORT_WAIT_MS): Promise<boolean> {
    this.accepting = false;
    // A claim already under way is written; its runs start and get the grace period like the rest.
    await this.afterClaims();
    await Promise.all([...this.callerClaims]);
    // Claimed, so promised a run: they start now and get the grace period like the rest.
    for (const claimed of this.claimedWaiting.splice(0)) this.start(claimed);
    if (await this.idleWithin(graceMs)) return true;
    this.log.warn(`cancelling ${this.runs.size} cron run(s) still going after the ${Math.round(graceMs / 1000)} s grace period`, {
      jobs: [...this.runs.keys()],
    });
    for (const run of this.runs.values()) run.abort.abort();
    await this.idleWithin(abortWaitMs);
    return false;
  }

  private async claimAndStart(): Promise<DispatchResult> {
    if (!this.accepting) return { lockBusy: false, waiting: 0 };
    const free = this.settings.maxParallelJobs - this.runs.size - this.claimedWaiting.length;
    const claims = await this.tick.claim({ limit: free, waitedForSlot: this.reportedWaiting, aheadMs: this.claimAheadMs });
    for (let i = 0; i < claims.claimed.length; i += 1) {
      if (i > 0 && i % STARTS_PER_TURN === 0) await this.timer.yieldTurn?.();
      this.start(claims.claimed[i]!);
    }
    if (!claims.lockBusy && claims.waitingAll) {
      // Forget jobs that no longer wait (paused, removed, claimed by another gateway).
      const waiting = new Set(claims.waiting.map((job) => job.id));
      for (const id of this.reportedWaiting) if (!waiting.has(id)) this.reportedWaiting.delete(id);
    }
    for (const job of claims.waiting) {
      if (this.reportedWaiting.has(job.id)) continue;
      this.reportedWaiting.add(job.id);
      this.log.info(
        `job '${job.name}' is due and waits for a free run slot: ${this.runs.size} run(s) in progress, cron.max_parallel_jobs is ${this.settings.maxParallelJobs}`,
        { job: job.id },
      );
    }
    return { lockBusy: claims.lockBusy, waiting: claims.waiting.length };
  }

  private startOrQueue(claimed: ClaimedJob): void {
    if (this.runs.size < this.settings.maxParallelJobs) {
      this.start(claimed);
      return;
    }
    this.claimedWaiting.push(claimed);
    this.reportedWaiting.add(claimed.job.id);
    this.log.info(
      `job '${claimed.job.name}' was fired and waits for a free run slot: ${this.runs.size} run(s) in progress, cron.max_parallel_jobs is ${this.settings.maxParallelJobs}`,
      { job: claimed.job.id },
    );
  }

  private startWaitingClaim(): void {
    const next = this.claimedWaiting.shift();
    if (next) this.start(next);
  }

  private start(claimed: ClaimedJob): void {
    const { job } = claimed;
    // By run: a job's runs may overlap (overlap `allow`).
    const key = runKeyOf(job);
    const abort = new AbortController();
    const run = this.dispatched.start(claimed, { signal: abort.signal, waitedForSlot: this.reportedWaiting.delete(job.id) });
    // The slot is free before anyone hears of the end, so a dispatch it prompts can use it.
    const done = run.answered.then(
      (ran) => {
        this.runs.delete(key);
        if (this.accepting) this.startWaitingClaim();
        this.released(job.id);
        run.finish(ran);
      },
      (error: unknown) => {
        this.runs.delete(key);
        if (this.accepting) this.startWaitingClaim();
        this.log.error(`the run of job '${job.name}' could not be recorded: ${errorText(error)}`, { job: job.id });
      },
    );
    this.runs.set(key, { job, abort, done });
  }

  private released(jobId: string): void {
    for (const listener of this.releasedListeners) {
      try {
        listener(jobId);
      } catch (error) {
        this.log.error(`a listener of released jobs failed: ${errorText(error)}`);
      }
    }
  }

  /** Whether every run ended within `ms`. */
  private async idleWithin(ms: number): Promise<boolean> {
    if (this.runs.size === 0) return true;
    const cancel = new AbortController();
    const allDone = (async () => {
      while (this.runs.size > 0) await Promise.all([...this.runs.values()].map((run) => run.done));
      return true;
    })();
    const idle = await Promise.race([allDone, this.timer.wait(ms, cancel.signal).then(() => false)]);
    cancel.abort();
    return idle;
  }
}
