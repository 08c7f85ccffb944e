import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import type { Job } from '../../domain/Job.js';
import type { UnreadableRecord } from '../../domain/JobRecord.js';

/** All jobs as read at one moment, plus the stored records that could not be understood. */
export interface JobSnapshot {
  jobs: Job[];
  unreadable: UnreadableRecord[];
}

/** What a change to one job returns: the job to store (the very one given: nothing is written) and a result. */
export interface JobUpdate<T> {
  job: Job;
  result: T;
}

/** The jobs a tick looks at: those `running`, and those due (scheduled, enabled, `next_run_at` reached), earliest first. */
export interface TickCandidates {
  running: readonly Job[];
  due: readonly Job[];
}

export interface SettleOptions {
  /** Whether the running jobs are candidates (default true). */
  running?: boolean;
}

/** What a tick decided: the jobs it changed (each stored in place of its old self) and a result. */
export interface TickSettlement<T> {
  changed: readonly Job[];
  result: T;
}

/**
 * Where jobs live, in the terms the scheduler needs: every operation is one atomic step of the
 * domain (create, change, remove, claim due slots, record a run's end), and the rules — which job
 * a reference means, what a claim or a run's end does to it — stay in the domain; a store only
 * finds, locks and stores. Every implementation promises:
 * - each operation is atomic and serialized against every other that changes the same job, in
 *   this process or any other, on this machine or any other sharing the store: no update is lost,
 *   and a slot handed to one `settleDue` or `update` is never handed to another;
 * - no two jobs hold the same name (compared case-insensitively) through `create` or `update`;
 * - a `check` given to `create` or `update` sees every job as the write leaves them, and writes
 *   given a check go one at a time, in this process or any other: two of them can never each
 *   pass a check that together they would fail (two links that make a cycle);
 * - records it cannot understand are kept untouched and reported, never fatal, never dropped;
 * - a crash at any instant leaves either the old or the new contents, never a mix.
 * Changes passed in must be pure and quick: other processes may wait for them.
 */
/**
 * A check of a job about to be written against every job as stored at that moment (the chains'
 * cycles and length, docs/cron.md, Chains); it throws to refuse the write.
 */
export type JobsCheck = (job: Job, all: readonly Job[]) => void;

export interface JobRepository {
  /** Every job, and the stored records that could not be understood. Empty when nothing was stored yet. */
  load(): Promise<JobSnapshot>;
  /** The job with this id, or null. */
  findById(id: string): Promise<Job | null>;
  /**
   * Stores a new job. A chosen name already held by another job is refused (the domain's
   * NAME_TAKEN error); a default name is numbered until free ("name (2)"). Returns the job as stored.
   */
  create(job: Job, nameWasChosen: boolean, check?: JobsCheck): Promise<Job>;
  /**
   * Changes the job `reference` means (its id, else its name, case-insensitively; the domain's
   * errors when none or several match or its record is unreadable). A new name must be free.
   */
  update<T>(reference: string, change: (job: Job) => JobUpdate<T>, check?: JobsCheck): Promise<T>;
  /** Like `update` for the job with this id, resolving null (calling nothing) when there is none. */
  updateById<T>(id: string, change: (job: Job) => JobUpdate<T>): Promise<T | null>;
  /** The jobs that run after the job `id` (their `after` names it: docs/cron.md, Chains), in store order; empty for none. */
  followersOf(id: string): Promise<Job[]>;
  /** Removes the job `reference` means (as for `update`) and returns it. */
  remove(reference: string): Promise<Job>;
  /** The earliest `next_run_at` of the scheduled, enabled jobs, later than `after` when given. */
  nextRunAt(after?: Date): Promise<Date | null>;
  /** A cheap look before a tick: whether any job is due by `dueBy`, and the jobs `running`. */
  peek(dueBy: Date): Promise<{ anyDue: boolean; running: readonly Job[] }>;
  /**
   * The tick's one step: the `running` jobs and up to `limit` jobs due by `dueBy` (earliest
   * first; jobs another store client is settling right now are left out) are handed to `settle`,
   * and the jobs it returns as changed are stored, all at once. With `running: false` the running
   * jobs are neither read nor held (`candidates.running` is empty): a tick that saw none of them
   * abandoned leaves them to the runs that are recording their ends.
   */
  settleDue<T>(dueBy: Date, limit: number, settle: (candidates: TickCandidates) => TickSettlement<T>, options?: SettleOptions): Promise<T>;
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
