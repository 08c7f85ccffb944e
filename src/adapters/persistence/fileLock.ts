import { setTimeout as delay } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { errnoCode } from './fileSystem.js';

/**
 * How long a read-modify-write waits for other processes before giving up. Twenty processes
 * queueing for a lock that each holds for milliseconds get through in well under a second; the
 * margin is for slow disks and loaded machines.
 */
export const LOCK_WAIT_MS = 30_000;
/**
 * A lock not refreshed for this long belongs to a process that died holding it and is taken
 * over. The holder refreshes it every LOCK_REFRESH_MS, so only a process stalled for longer
 * than the difference loses a lock it still holds.
 */
const LOCK_STALE_MS = 10_000;
const LOCK_REFRESH_MS = 2_000;
/** Backoff between attempts: doubles up to the cap, each wait randomized to ±50 % so contenders spread out. */
const FIRST_BACKOFF_MS = 5;
const MAX_BACKOFF_MS = 250;

/**
 * Read-modify-writes of one file in this process, chained so that they take the cross-process
 * lock one after the other instead of polling for it against each other. Shared by every
 * store instance because proper-lockfile keeps one lock per path per process.
 */
const inProcessQueues = new Map<string, Promise<unknown>>();

/** Runs `task` after every earlier task queued under `key` in this process has settled. */
export function runInTurn<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = inProcessQueues.get(key) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.catch(() => undefined);
  inProcessQueues.set(key, tail);
  void tail.then(() => {
    if (inProcessQueues.get(key) === tail) inProcessQueues.delete(key);
  });
  return run;
}

/** A cross-process lock as held by one read-modify-write. */
export interface HeldLock {
  /** Set when proper-lockfile found the lock taken over while we held it. */
  readonly lost: boolean;
  /** Never throws: a lock that cannot be removed goes stale and is taken over. */
  release(): Promise<void>;
}

/** Other processes kept the lock for longer than LOCK_WAIT_MS. */
export class LockWaitExpired extends Error {
  constructor(readonly lockPath: string, options: { cause: unknown }) {
    super(`the lock ${lockPath} stayed taken for more than ${LOCK_WAIT_MS / 1000} seconds`, options);
  }
}

/**
 * Takes the lock directory `lockPath` for `file` with proper-lockfile, waiting up to
 * LOCK_WAIT_MS while another process holds it. Throws LockWaitExpired after that wait, and the
 * file system's own error at once for anything else (EACCES, ENOTDIR …): proper-lockfile's own
 * `retries` would retry those for the whole wait too.
 */
export async function acquireFileLock(file: string, lockPath: string): Promise<HeldLock> {
  const state = { lost: false };
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let backoff = FIRST_BACKOFF_MS; ; backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)) {
    try {
      const release = await lockfile.lock(file, {
        lockfilePath: lockPath,
        realpath: false,
        retries: 0,
        stale: LOCK_STALE_MS,
        update: LOCK_REFRESH_MS,
        // The default handler throws from a timer and kills the process; a lost lock only
        // has to stop the change from being written.
        onCompromised: () => {
          state.lost = true;
        },
      });
      return {
        get lost() {
          return state.lost;
        },
        release: async () => {
          try {
            await release();
          } catch {
            // Already released because it was lost, or the directory could not be removed:
            // either way others take it over once it is stale; the change itself is done.
          }
        },
      };
    } catch (error) {
      if (errnoCode(error) !== 'ELOCKED') throw error;
      if (Date.now() >= deadline) throw new LockWaitExpired(lockPath, { cause: error });
      await delay(backoff * (0.5 + Math.random()));
    }
  }
}
