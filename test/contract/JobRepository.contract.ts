import type { JobRepository } from '../../src/application/ports/JobRepository.js';
import { pauseJob, type Job } from '../../src/domain/Job.js';
import { CREATED_AT, anHourlyJob, jobIdFor } from '../helpers/jobs.js';

export interface JobRepositorySubject {
  repo: JobRepository;
  cleanup?: () => Promise<void>;
}

/** A change that adds `job` at the end and answers its id. */
const append = (job: Job) => (jobs: readonly Job[]) => ({ jobs: [...jobs, job], result: job.id });

/**
 * What every JobRepository promises (src/application/ports/JobRepository.ts). Each test gets a
 * fresh, empty store from `makeSubject`.
 */
export function describeJobRepositoryContract(
  name: string,
  makeSubject: () => Promise<JobRepositorySubject>,
): void {
  describe(`${name} (JobRepository contract)`, () => {
    let subject: JobRepositorySubject;
    let repo: JobRepository;

    beforeEach(async () => {
      subject = await makeSubject();
      repo = subject.repo;
    });

    afterEach(async () => {
      await subject.cleanup?.();
    });

    it('loads an empty snapshot from a store nobody has written', async () => {
      expect(await repo.load()).toEqual({ jobs: [], unreadable: [] });
    });

    it('keeps a job that modify added, field for field', async () => {
      const job = anHourlyJob(jobIdFor(1));
      await repo.modify(append(job));
      expect((await repo.load()).jobs).toEqual([job]);
    });

    it('keeps the jobs in the order modify gave them', async () => {
      const [a, b, c] = [1, 2, 3].map((n) => anHourlyJob(jobIdFor(n))) as [Job, Job, Job];
      await repo.modify(() => ({ jobs: [c, a, b], result: undefined }));
      expect((await repo.load()).jobs.map((job) => job.id)).toEqual([c.id, a.id, b.id]);
    });

    it('stores a changed job in place of the old one', async () => {
      const job = anHourlyJob(jobIdFor(1));
      await repo.modify(append(job));
      const pausedAt = new Date(CREATED_AT.getTime() + 60_000);
      await repo.modify((jobs) => ({ jobs: jobs.map((each) => pauseJob(each, pausedAt)), result: undefined }));
      expect((await repo.load()).jobs).toEqual([pauseJob(job, pausedAt)]);
    });

    it('forgets a job that modify removed', async () => {
      await repo.modify(append(anHourlyJob(jobIdFor(1))));
      await repo.modify(append(anHourlyJob(jobIdFor(2))));
      await repo.modify((jobs) => ({ jobs: jobs.filter((job) => job.id !== jobIdFor(1)), result: undefined }));
      expect((await repo.load()).jobs.map((job) => job.id)).toEqual([jobIdFor(2)]);
    });

    it("returns the change's result to the caller", async () => {
      await expect(repo.modify(append(anHourlyJob(jobIdFor(7))))).resolves.toBe(jobIdFor(7));
      await expect(repo.modify((jobs) => ({ jobs, result: jobs.length }))).resolves.toBe(1);
    });

    it('writes nothing when the change returns the array it was given', async () => {
      await repo.modify(append(anHourlyJob(jobIdFor(1))));
      // Mutating the given array is the only way a no-op change could leave a trace: it must not be stored.
      const result = await repo.modify((jobs) => {
        (jobs as Job[]).push(anHourlyJob(jobIdFor(2)));
        return { jobs, result: 'unchanged' };
      });
      expect(result).toBe('unchanged');
      expect((await repo.load()).jobs.map((job) => job.id)).toEqual([jobIdFor(1)]);
    });

    it('loses no update when many modify calls run at once', async () => {
      const ids = Array.from({ length: 50 }, (_, n) => jobIdFor(n + 1));
      await Promise.all(ids.map((id) => repo.modify(append(anHourlyJob(id)))));
      const stored = (await repo.load()).jobs.map((job) => job.id);
      expect([...stored].sort()).toEqual(ids);
    });

    it('rejects with the error of a throwing change and keeps the store as it was', async () => {
      const job = anHourlyJob(jobIdFor(1));
      await repo.modify(append(job));
      const failure = new Error('the change failed');
      await expect(
        repo.modify((jobs) => {
          (jobs as Job[]).length = 0;
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect((await repo.load()).jobs).toEqual([job]);
    });

    it('keeps working after a change threw', async () => {
      await expect(repo.modify(() => { throw new Error('no'); })).rejects.toThrow('no');
      await repo.modify(append(anHourlyJob(jobIdFor(1))));
      expect((await repo.load()).jobs).toHaveLength(1);
    });

    it('hands out copies: changing a loaded job does not change the store', async () => {
      await repo.modify(append(anHourlyJob(jobIdFor(1))));
      const loaded = await repo.load();
      loaded.jobs[0]!.name = 'renamed behind the store';
      expect((await repo.load()).jobs[0]!.name).toBe(`job ${jobIdFor(1)}`);
    });
  });
}
