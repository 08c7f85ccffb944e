import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import type { Job } from '../../domain/Job.js';
import type { UnreadableRecord } from '../../domain/JobRecord.js';

/** All jobs as read at one moment, plus the stored records that could not be understood. */
export interface JobSnapshot {
  jobs: Job[];
  unreadable: UnreadableRecord[];
}

/** What a change to the store returns: the full new list of jobs and a result for the caller. */
export interface JobChange<T> {
  jobs: readonly Job[];
  result: T;
}

/**
 * Where jobs live. Every implementation promises:
 * - `modify` is an atomic read-modify-write, serialized against every other `modify` on the
 *   same store, in this process or any other: no update is ever lost;
 * - records it cannot understand are kept untouched and reported, never fatal, never dropped;
 * - a crash at any instant leaves either the old or the new contents, never a mix.
 */
export interface JobRepository {
  /** Reads every job. Returns an empty snapshot when the store does not exist yet. */
  load(): Promise<JobSnapshot>;
  /**
   * Runs `change` on the current jobs while holding the store's lock and writes the list it
   * returns, unless it returns the very same array it was given (nothing is written then).
   * `change` must not do slow I/O: other processes wait for the lock meanwhile. It is also
   * told which records could not be read (they are written back untouched), so that a command
   * naming one can say what is wrong with it.
   */
  modify<T>(change: (jobs: readonly Job[], unreadable: readonly UnreadableRecord[]) => JobChange<T>): Promise<T>;
}

/** The stored file is not what we wrote: it is left as it is for a person to look at. */
export class JobStoreDamagedError extends AppError {
  constructor(location: string, detail: string, options?: { cause?: unknown }) {
    super(
      ERROR_CODES.STORE.DAMAGED,
      `The job store ${location} is damaged (${detail}); it was left untouched — fix or move it and try again.`,
      options,
    );
  }
}

/** The store cannot be read or written (permissions, disk, lock timeout). */
export class JobStoreUnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ERROR_CODES.STORE.UNAVAILABLE, message, options);
  }
}
