import { Fifo } from './webhook/Fifo.js';

/** Gives a permit back; calling it more than once gives back one. */
export type Release = () => void;

interface Waiter {
  grant: (release: Release) => void;
  /** Set when its signal fired: it is skipped when its turn comes. */
  gone: boolean;
}

/**
 * At most `limit` holders at once; the others wait first in first out. A waiter whose signal
 * fires leaves the queue at once (its promise rejects with the signal's reason) and is skipped
 * when its turn comes, so a cancelled run never takes a permit. Every operation costs the same
 * however many wait. Infinity means no limit.
 */
export class PermitPool {
  private held = 0;
  private readonly queue = new Fifo<Waiter>();
  private queued = 0;

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`a permit pool needs a limit of 1 or more (got ${limit})`);
  }

  /** Permits held now. */
  get inUse(): number {
    return this.held;
  }

  /** Takers waiting for a permit now. */
  get waiting(): number {
    return this.queued;
  }

  /** A permit now, or null when every one is held (or others wait before). */
  tryAcquire(): Release | null {
    if (this.held >= this.limit || this.queued > 0) return null;
    this.held += 1;
    return this.releaser();
  }

  /** A permit, once one is free; rejects with the signal's reason when it fires first. */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(reasonOf(signal));
    const now = this.tryAcquire();
    if (now) return Promise.resolve(now);
    return new Promise<Release>((resolve, reject) => {
      const onAbort = () => {
        waiter.gone = true;
        this.queued -= 1;
        reject(reasonOf(signal!));
      };
      const waiter: Waiter = {
        gone: false,
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      this.queue.push(waiter);
      this.queued += 1;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.handOn();
    };
  }

  /** A permit given back goes to the oldest waiter still there, else back to the pool. */
  private handOn(): void {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      if (next.gone) continue;
      this.queued -= 1;
      next.grant(this.releaser());
      return;
    }
    this.held -= 1;
  }
}

function reasonOf(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

/** The permits of a whole process: in-process model sessions, and the processes runs start. */
export interface RunLimits {
  /** `agent.max_concurrent_sessions`: model sessions of this process at once (cron, webhook and chat together). */
  readonly sessions: PermitPool;
  /** `agent.max_concurrent_processes`: command agents, scripts and terminal commands at once. */
  readonly processes: PermitPool;
}

/** No limit on either: what code built by hand without the gateway's limits gets. */
export const UNLIMITED_RUNS: RunLimits = {
  sessions: new PermitPool(Infinity),
  processes: new PermitPool(Infinity),
};

/**
 * How many cron runs claimed together start in one turn of the event loop: a thousand jobs due at
 * one instant start in turns of this many, so that accepts, fires and the runs already started
 * (their connections to the model) go on between them rather than after all of them.
 */
export const STARTS_PER_TURN = 16;

/**
 * How many runs claimed ahead of one slot are let go per turn of the event loop when the slot
 * comes (RunStops.untilStart): in turns of this many, the connections of the first are opened
 * and their requests sent while the next start, and no turn holds the loop for all of them.
 * Sixteen let the streams of the first runs delay the last ones' starts.
 */
export const RELEASES_PER_TURN = 64;
