import type { EventEmitter } from 'node:events';
import { open, rmdir, type FileHandle } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { PRIVATE_FILE_MODE, errnoCode } from './fileSystem.js';

/**
 * How long a read-modify-write waits for other processes before giving up. Twenty processes
 * queueing for a lock that each holds for milliseconds get through in well under a second; the
 * margin is for slow disks and loaded machines. A holder that is stopped (Ctrl-Z, a paused VM)
 * keeps its lock for as long as it is stopped: waiters give up with an error, never take it.
 */
export const LOCK_WAIT_MS = 30_000;
/** Backoff between attempts: doubles up to the cap, each wait randomized to ±50 % so contenders spread out. */
const FIRST_BACKOFF_MS = 2;
const MAX_BACKOFF_MS = 100;

/**
 * Read-modify-writes of one file in this process, chained so that they take the cross-process
 * lock one after the other instead of polling for it against each other. Shared by every
 * store instance: their locks exclude each other as well, and polling for one another's is waste.
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
  /** Never throws. */
  release(): Promise<void>;
}

/** Other processes kept the lock for longer than LOCK_WAIT_MS. */
export class LockWaitExpired extends Error {
  constructor(readonly lockPath: string) {
    super(`the lock ${lockPath} stayed taken for more than ${LOCK_WAIT_MS / 1000} seconds`);
  }
}

/**
 * Every open file that carries a kernel lock taken here, from the moment the lock is taken until
 * the file is closed. Node closes a FileHandle that nothing references when the garbage collector
 * finds it, and the kernel lets the lock go with the file: a journal, a store's lock or the chat
 * receiving role whose owner object was dropped (or whose only reference was a closure that went
 * unreachable) would be freed for another process while this one lives, and its work done twice.
 * Kept here, a locked file lives until its holder closes it explicitly or the process ends;
 * closing removes it (FileHandle emits 'close'). See docs/adr/0008-kernel-file-locks.md.
 */
const lockedFiles = new Set<FileHandle>();

function keepUntilClosed(handle: FileHandle): void {
  if (lockedFiles.has(handle)) return;
  lockedFiles.add(handle);
  // FileHandle is an EventEmitter at run time (Node >= 15.4); @types/node does not say so.
  (handle as unknown as EventEmitter).once('close', () => lockedFiles.delete(handle));
}

/** fs-native-extensions, loaded on the first lock: commands that only read never load it. */
let nativeLocks: Promise<typeof import('fs-native-extensions')> | null = null;

/**
 * Takes an exclusive lock on the file `lockPath` (created 0600 if absent), waiting up to
 * LOCK_WAIT_MS while another holder has it; throws LockWaitExpired after that, and the file
 * system's own error at once for anything else (EACCES, EROFS …).
 *
 * The lock is the kernel's (an open-file-description lock through fs-native-extensions; flock
 * where there are none): it lasts exactly as long as the holder's open file, so the kernel frees
 * it the moment the holder dies, however it dies, and never while the holder lives. A holder
 * stalled for minutes still holds it; nobody can take it over and then be overwritten by the
 * holder's stale snapshot (docs/adr/0008-kernel-file-locks.md). Two holders in one process
 * exclude each other too.
 */
export async function acquireFileLock(lockPath: string): Promise<HeldLock> {
  const { tryLock, unlock } = await (nativeLocks ??= import('fs-native-extensions'));
  const handle = await openLockFile(lockPath);
  const deadline = Date.now() + LOCK_WAIT_MS;
  try {
    for (let backoff = FIRST_BACKOFF_MS; !tryLock(handle.fd); backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)) {
      if (Date.now() >= deadline) throw new LockWaitExpired(lockPath);
      await delay(backoff * (0.5 + Math.random()));
    }
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  keepUntilClosed(handle);
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      try {
        unlock(handle.fd);
      } catch {
        // Closing the file below releases it all the same.
      }
      await handle.close().catch(() => undefined);
    },
  };
}

/**
 * Takes an exclusive kernel lock on an open file without waiting: true when taken (it lasts
 * until the handle is closed or the process dies, and the handle is kept referenced until then,
 * so the garbage collector never closes it), false when another holder has it. The handle must
 * be open for writing.
 */
export async function tryLockFile(handle: FileHandle): Promise<boolean> {
  const { tryLock } = await (nativeLocks ??= import('fs-native-extensions'));
  if (!tryLock(handle.fd)) return false;
  keepUntilClosed(handle);
  return true;
}

/**
 * Opens (creating 0600) the lock file. An empty directory in its place is the lock an earlier
 * version of this program left (it locked with a directory); it is removed and the file made.
 */
async function openLockFile(lockPath: string): Promise<FileHandle> {
  try {
    return await open(lockPath, 'a+', PRIVATE_FILE_MODE);
  } catch (error) {
    if (errnoCode(error) !== 'EISDIR') throw error;
    await rmdir(lockPath);
    return open(lockPath, 'a+', PRIVATE_FILE_MODE);
  }
}
