import type { Job } from '../../domain/Job.js';
import { dueTime, isDue } from '../../domain/jobLifecycle.js';
import { findJob } from '../../domain/jobLookup.js';
import type { UnreadableRecord } from '../../domain/JobRecord.js';
import { assertNameFree, sameName, withUniqueName } from '../../domain/jobNames.js';
import type {
  JobRepository,
  JobsCheck,
  JobSnapshot,
  JobUpdate,
  SettleOptions,
  TickCandidates,
  TickSettlement,
} from '../../application/ports/JobRepository.js';

/** A rewrite of the whole list: the jobs to store (the very array given: nothing is written) and a result. */
export interface ListChange<T> {
  jobs: readonly Job[];
  result: T;
}

export type ListChangeFunction<T> = (jobs: readonly Job[], unreadable: readonly UnreadableRecord[]) => ListChange<T>;

/**
 * The job store's operations for a store that can only read every job and rewrite every job at
 * once, under one lock (jobs.json; a test's memory): each operation is one read-modify-write of
 * the list, so they are all serialized against each other.
 */
export abstract class WholeListJobRepository implements JobRepository {
  abstract load(): Promise<JobSnapshot>;

  /**
   * Runs `change` on the current list under the store's lock and stores what it returns, unless it
   * returns the array it was given. A throwing `change` stores nothing.
   */
  abstract modify<T>(change: ListChangeFunction<T>): Promise<T>;

  /**
   * Every job, to read only: a store that keeps what it read may hand out the jobs it keeps,
   * and what it hands on to callers is copied (`copyOf`). By default, the jobs of `load`.
   */
  protected async jobsToRead(): Promise<readonly Job[]> {
    return (await this.load()).jobs;
  }

  /** A job of `jobsToRead` as handed to a caller, who may change it; by default, the job itself (`load` copied it already). */
  protected copyOf(job: Job): Job {
    return job;
  }

  async findById(id: string): Promise<Job | null> {
    const found = (await this.jobsToRead()).find((job) => job.id === id);
    return found ? this.copyOf(found) : null;
  }

  create(job: Job, nameWasChosen: boolean, check?: JobsCheck): Promise<Job> {
    return this.modify((jobs) => {
      const named = withUniqueName(jobs, job, nameWasChosen);
      const all = [...jobs, named];
      check?.(named, all);
      return { jobs: all, result: named };
    });
  }

  update<T>(reference: string, change: (job: Job) => JobUpdate<T>, check?: JobsCheck): Promise<T> {
    return this.modify((jobs, unreadable) => {
      const target = findJob(jobs, reference, unreadable);
      const changed = replaced(jobs, target, change);
      // Under the store's one lock: the write is checked against the jobs as it leaves them.
      if (check && changed.jobs !== jobs) check(changed.jobs[jobs.indexOf(target)]!, changed.jobs);
      return changed;
    });
  }

  updateById<T>(id: string, change: (job: Job) => JobUpdate<T>): Promise<T | null> {
    return this.modify<T | null>((jobs) => {
      const target = jobs.find((job) => job.id === id);
      return target ? replaced(jobs, target, change) : { jobs, result: null };
    });
  }

  remove(reference: string): Promise<Job> {
    return this.modify((jobs, unreadable) => {
      const target = findJob(jobs, reference, unreadable);
      return { jobs: jobs.filter((job) => job.id !== target.id), result: target };
    });
  }

  async followersOf(id: string): Promise<Job[]> {
    return (await this.jobsToRead()).filter((job) => (job.after ?? []).some((link) => link.job === id)).map((job) => this.copyOf(job));
  }

  async nextRunAt(after?: Date): Promise<Date | null> {
    let earliest: number | null = null;
    for (const job of await this.jobsToRead()) {
      const at = dueTime(job);
      if (at === null || (after && at <= after.getTime())) continue;
      if (earliest === null || at < earliest) earliest = at;
    }
    return earliest === null ? null : new Date(earliest);
  }

  async peek(dueBy: Date): Promise<{ anyDue: boolean; running: readonly Job[] }> {
    const jobs = await this.jobsToRead();
    return {
      anyDue: jobs.some((job) => isDue(job, dueBy)),
      running: jobs.filter((job) => job.state === 'running').map((job) => this.copyOf(job)),
    };
  }

  settleDue<T>(
    dueBy: Date,
    limit: number,
    settle: (candidates: TickCandidates) => TickSettlement<T>,
    options: SettleOptions = {},
  ): Promise<T> {
    return this.modify((jobs) => {
      const due = jobs
        .filter((job) => isDue(job, dueBy))
        .sort((a, b) => dueTime(a)! - dueTime(b)!)
        .slice(0, Math.max(0, limit));
      const running = options.running === false ? [] : jobs.filter((job) => job.state === 'running');
      const { changed, result } = settle({ running, due });
      if (changed.length === 0) return { jobs, result };
      const byId = new Map(changed.map((job) => [job.id, job]));
      return { jobs: jobs.map((job) => byId.get(job.id) ?? job), result };
    });
  }
}

/** The list with `target` replaced by what `change` makes of it; a new name must be free. */
function replaced<T>(jobs: readonly Job[], target: Job, change: (job: Job) => JobUpdate<T>): ListChange<T> {
  const { job, result } = change(target);
  if (job === target) return { jobs, result };
  if (!sameName(job.name, target.name)) assertNameFree(jobs, job.name, target.id);
  return { jobs: jobs.map((each) => (each === target ? job : each)), result };
}
