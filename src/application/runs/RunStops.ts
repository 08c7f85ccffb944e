/**
 * The runs under way in this process that can be stopped on purpose (docs/runs.md, Time limits
 * and cancel): each run's signal aborts, with a RunStop as its reason, when its time limit passes
 * or when `cancel` is called for it; and it still aborts when the caller's own signal does (the
 * gateway stopping). Cron runs are known by their job's id and claim, webhook runs by their event's.
 */
import { inject, injectable, optional } from 'inversify';
import { RELEASES_PER_TURN } from '../../domain/PermitPool.js';
import { RunStop } from '../../domain/runs/runStops.js';
import type { Timer } from '../ports/Timer.js';
import { TOKENS } from '../ports/tokens.js';

/** One run's stop: the signal to run it with, and its release once it ended. */
export interface RunGuard {
  signal: AbortSignal;
  /** The run ended: its time limit is dropped and it can no longer be cancelled. */
  release(): void;
}

@injectable()
export class RunStops {
  private readonly runs = new Map<string, AbortController>();
  /** Runs claimed ahead of their slots, waiting for them, by slot (ms): each set let go together. */
  private readonly starting = new Map<number, Set<() => void>>();

  constructor(
    /** Without it (tests that build the run path by hand), time limits are not kept; cancelling still works. */
    @inject(TOKENS.Timer) @optional() private readonly timer: Timer | null = null,
  ) {}

  /**
   * Guards the run known as `key`: its signal aborts with a RunStop once `limitSeconds` pass
   * (none when null) or `cancel(key, …)` is called, and with `outer`'s reason when `outer` aborts.
   * A run that starts `startsInMs` from now (claimed ahead of its slot) has its limit counted from then.
   */
  guard(key: string, limitSeconds: number | null | undefined, outer?: AbortSignal, startsInMs = 0): RunGuard {
    const controller = new AbortController();
    const ended = new AbortController();
    const follow = () => controller.abort(outer?.reason);
    if (outer?.aborted) follow();
    else outer?.addEventListener('abort', follow, { once: true });
    if (limitSeconds && this.timer) {
      void this.timer.wait(limitSeconds * 1000 + startsInMs, ended.signal).then(() => {
        if (!ended.signal.aborted) controller.abort(RunStop.timedOut(limitSeconds));
      });
    }
    this.runs.set(key, controller);
    return {
      signal: controller.signal,
      release: () => {
        // With a reason: abort() without one makes a DOMException, stack and all, for every run.
        ended.abort('ended');
        outer?.removeEventListener('abort', follow);
        if (this.runs.get(key) === controller) this.runs.delete(key);
      },
    };
  }

  /**
   * Stops the run known as `key`, recorded as cancelled by `who`: true when it stops now, false
   * when no such run is under way here or it is stopping already.
   */
  cancel(key: string, who: string): boolean {
    const controller = this.runs.get(key);
    if (!controller || controller.signal.aborted) return false;
    controller.abort(RunStop.cancelledBy(who));
    return true;
  }

  /**
   * The wait between two attempts of a run (docs/runs.md, Retries): `ms` on the timer, over as
   * soon as `signal` aborts (the run stopped meanwhile); at once without a timer.
   */
  async pause(ms: number, signal?: AbortSignal): Promise<void> {
    await this.timer?.wait(ms, signal);
  }

  /**
   * Waits `ms` for the start of a run claimed ahead of its slot `slot` (docs/gateway.md), or until
   * `signal` aborts. The runs of one slot share one timer and are let go RELEASES_PER_TURN per
   * turn of the event loop.
   */
  async untilStart(slot: Date, ms: number, signal?: AbortSignal): Promise<void> {
    if (!this.timer || ms <= 0 || signal?.aborted) return;
    const at = slot.getTime();
    const started = this.starting.get(at) ?? this.startAt(at, ms, this.timer);
    await new Promise<void>((resolve) => {
      const start = () => {
        signal?.removeEventListener('abort', stopped);
        resolve();
      };
      const stopped = () => {
        started.delete(start);
        resolve();
      };
      started.add(start);
      signal?.addEventListener('abort', stopped, { once: true });
    });
  }

  /** The runs waiting for the slot `at` (ms), let go `ms` from now, RELEASES_PER_TURN per turn. */
  private startAt(at: number, ms: number, timer: Timer): Set<() => void> {
    const started = new Set<() => void>();
    this.starting.set(at, started);
    void timer.wait(ms).then(async () => {
      this.starting.delete(at);
      let released = 0;
      for (const start of started) {
        if (released > 0 && released % RELEASES_PER_TURN === 0) await timer.yieldTurn?.();
        started.delete(start);
        start();
        released += 1;
      }
    });
    return started;
  }

  /** The keys of the runs under way here that start with `prefix`, without it. */
  underWay(prefix: string): string[] {
    return [...this.runs.keys()].filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length));
  }
}

/** The key a cron run of the job `jobId`, claimed at `claimedAt`, is known by (two runs of one job may overlap). */
export const cronRunKey = (jobId: string, claimedAt = ''): string => `cron:${jobId}@${claimedAt}`;
/** The key a webhook run of the event `eventId` is known by. */
export const webhookRunKey = (eventId: string): string => `webhook:${eventId}`;
