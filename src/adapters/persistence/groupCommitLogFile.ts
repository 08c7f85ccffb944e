import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tryLockFile } from './fileLock.js';
import type { CompactionPlan } from './groupCommitLogRewrite.js';

/**
 * The file under a group commit log (GroupCommitLog.ts): the options a log is opened with, the
 * flag it is opened with, its kernel lock, and the newlines its slack is made of.
 */

/**
 * Where the system has it (Linux, macOS), the log is opened with `O_DSYNC`: a write returns once
 * its bytes and the file's new size are on disk, so a batch is one call to the thread pool
 * instead of a write and then an `fdatasync`. That is one hand-over between the thread pool and
 * the event loop fewer per batch, which under `npm run bench:webhook` took the accept path's
 * median wait for the disk from ~1.3 to ~0.9 ms.
 */
export const SYNC_ON_WRITE: number = constants.O_DSYNC ?? 0;

export interface LogOptions {
  compaction?: CompactionPlan;
  /**
   * Bytes of slack kept after the records: the file is padded with newlines (blank lines, which
   * readers skip) that later records overwrite in place. Overwriting blocks the file already
   * has needs no free space, so records that fit in the slack are written even on a full disk.
   * Default 0: no slack.
   */
  reserveBytes?: number;
  /**
   * How much of the slack only appends marked `reserved` may use: a batch of other appends that
   * would leave less than this grows the file instead, and fails when the disk is full.
   */
  protectedBytes?: () => number;
  /** Holds an exclusive kernel lock on the file for as long as the log is open; opening fails when another holder has it. */
  lock?: boolean;
}

/** The file is locked by another open log (a live process). */
export class LogInUse extends Error {
  constructor(readonly path: string) {
    super(`${path} is in use by another process`);
  }
}

/** Errors of a full disk or quota: the write may succeed in space the file already has. */
export const NO_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);
export const NEWLINE = 0x0a;

export function withSlack(text: string | Buffer, slack: number): Buffer {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return slack === 0 ? bytes : Buffer.concat([bytes, Buffer.alloc(slack, NEWLINE)]);
}

/** Locks the handle's file for its life, or throws LogInUse. */
export function lockOrThrow(path: string): (handle: FileHandle) => Promise<void> {
  return async (handle) => {
    if (!(await tryLockFile(handle))) throw new LogInUse(path);
  };
}
