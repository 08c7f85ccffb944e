import type { Job } from '../../../src/domain/Job.js';
import type { UnreadableRecord } from '../../../src/domain/JobRecord.js';
import type { JobSnapshot } from '../../../src/application/ports/JobRepository.js';
import { WholeListJobRepository, type ListChangeFunction } from '../../../src/adapters/persistence/WholeListJobRepository.js';

/** A JobRepository in memory; `modify` calls are serialized like the file store's. */
export class InMemoryJobRepository extends WholeListJobRepository {
  private jobs: Job[];
  private queue: Promise<unknown> = Promise.resolve();
  writes = 0;

  constructor(
    jobs: Job[] = [],
    private readonly unreadable: UnreadableRecord[] = [],
  ) {
    super();
    this.jobs = structuredClone(jobs);
  }

  async load(): Promise<JobSnapshot> {
    return { jobs: structuredClone(this.jobs), unreadable: [...this.unreadable] };
  }

  modify<T>(change: ListChangeFunction<T>): Promise<T> {
    const run = this.queue.then(() => {
      const current = structuredClone(this.jobs);
      const { jobs, result } = change(current, [...this.unreadable]);
      if (jobs !== current) {
        this.jobs = structuredClone([...jobs]);
        this.writes += 1;
      }
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Test helper: every stored job. */
  all(): Job[] {
    return structuredClone(this.jobs);
  }

  /** Test helper: the stored job with this id. */
  get(id: string): Job | undefined {
    return structuredClone(this.jobs.find((job) => job.id === id));
  }
}
