import type { JobRepository } from '../../src/application/ports/JobRepository.js';
import type { Job } from '../../src/domain/Job.js';
import { checkChainLinks } from '../../src/domain/jobChains.js';
import { claimJob, pauseJob } from '../../src/domain/jobLifecycle.js';
import { CREATED_AT, anHourlyJob, jobIdFor } from '../support/jobs.js';

export interface JobRepositorySubject {
  repo: JobRepository;
  cleanup?: () => Promise<void>;
}

const HOUR_MS = 3_600_000;
/** A job whose next run is `hours` after CREATED_AT (the hourly jobs are due an hour after it). */
const dueIn = (id: string, hours: number): Job => ({
  ...anHourlyJob(id),
  next_run_at: new Date(CREATED_AT.getTime() + hours * HOUR_MS).toISOString().replace('.000Z', 'Z'),
});
const at = (hours: number) => new Date(CREATED_AT.getTime() + hours * HOUR_MS);
const ids = (jobs: readonly Job[]) => jobs.map((job) => job.id).sort();

/**
 * What every JobRepository promises (src/application/ports/JobRepository.ts). Each test gets a
 * fresh, empty store from `makeSubject`; `makeOther`, when given, opens a second client of the
 * same store (another process or replica would), to show that the promises hold across clients.
 */
export function describeJobRepositoryContract(name: string, makeSubject: () => Promise<JobRepositorySubject>): void {
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

    it('finds the jobs that run after a job, and only those', async () => {
      const followed = await repo.create(anHourlyJob(jobIdFor(1)), true);
      const follower = await repo.create({ ...anHourlyJob(jobIdFor(2)), after: [{ job: followed.id, on: 'ok' }] }, true);
      const both = await repo.create(
        {
          ...anHourlyJob(jobIdFor(3)),
          after: [
            { job: jobIdFor(9), on: 'any' },
            { job: followed.id, on: 'failed' },
          ],
        },
        true,
      );
      await repo.create({ ...anHourlyJob(jobIdFor(4)), after: [{ job: jobIdFor(9), on: 'any' }] }, true);

      expect(ids(await repo.followersOf(followed.id))).toEqual(ids([follower, both]));
      expect(await repo.followersOf(follower.id)).toEqual([]);
    });

    it('checks writes given a check one at a time: of two links made at once that together close a cycle, one is refused', async () => {
      const a = await repo.create(anHourlyJob(jobIdFor(1)), true);
      const b = await repo.create(anHourlyJob(jobIdFor(2)), true);
      const chainCheck = (job: Job, all: readonly Job[]) => checkChainLinks(all, job, job.after ?? []);
      const link = (id: string, to: string) =>
        repo.update(
          id,
          (current) => {
            const linked: Job = { ...current, after: [{ job: to, on: 'ok' }] };
            return { job: linked, result: linked };
          },
          chainCheck,
        );

      const made = await Promise.allSettled([link(a.id, b.id), link(b.id, a.id)]);

      expect(made.filter((each) => each.status === 'fulfilled')).toHaveLength(1);
      const [refused] = made.filter((each): each is PromiseRejectedResult => each.status === 'rejected');
      expect(String(refused!.reason)).toContain('already runs after');
      const linked = (await repo.load()).jobs.filter((job) => (job.after ?? []).length > 0);
      expect(linked).toHaveLength(1);
      // A new job's check sees every job too.
      await expect(
        repo.create({ ...anHourlyJob(jobIdFor(3)), after: [{ job: a.id, on: 'ok' }] }, true, (job, all) => {
          expect(all.map((each) => each.id).sort()).toEqual([a.id, b.id, job.id].sort());
        }),
      ).resolves.toMatchObject({ id: jobIdFor(3) });
    });

    it('loads an empty snapshot from a store nobody has written', async () => {
      expect(await repo.load()).toEqual({ jobs: [], unreadable: [] });
      expect(await repo.findById(jobIdFor(1))).toBeNull();
      expect(await repo.nextRunAt()).toBeNull();
    });

    it('keeps a created job field for field, and finds it by id', async () => {
      const job = anHourlyJob(jobIdFor(1));
      await expect(repo.create(job, true)).resolves.toEqual(job);
      expect((await repo.load()).jobs).toEqual([job]);
      expect(await repo.findById(job.id)).toEqual(job);
    });

    it("keeps a job's own time zone, and a change of it back to the configured zone (null)", async () => {
      const job = await repo.create({ ...anHourlyJob(jobIdFor(1)), timezone: 'America/New_York' }, true);
      expect(await repo.findById(job.id)).toMatchObject({ timezone: 'America/New_York' });
      await repo.update(job.id, (current) => ({ job: { ...current, timezone: null }, result: null }));
      expect((await repo.load()).jobs).toEqual([{ ...job, timezone: null }]);
    });

    it('keeps the catch-up policy of a job and whether it runs the agent, through a change', async () => {
      const job: Job = { ...anHourlyJob(jobIdFor(1)), script: 'disk.sh', no_agent: true, catch_up: 'skip' };
      await repo.create(job, true);
      expect(await repo.findById(job.id)).toEqual(job);

      const edited = await repo.update(job.id, (current) => {
        const changed: Job = { ...current, no_agent: false, catch_up: null };
        return { job: changed, result: changed };
      });
      expect(edited).toMatchObject({ no_agent: false, catch_up: null });
      expect((await repo.load()).jobs).toEqual([{ ...job, no_agent: false, catch_up: null }]);
    });

    it("keeps a job's own toolsets, working folder and carried answers, through a change", async () => {
      const job: Job = {
        ...anHourlyJob(jobIdFor(1)),
        toolsets: ['web', 'clarify'],
        workdir: '/srv/site',
        context_from: [jobIdFor(2)],
        continue: true,
      };
      await repo.create(job, true);
      expect(await repo.findById(job.id)).toEqual(job);

      const cleared = { toolsets: null, workdir: null, context_from: [], continue: false };
      await repo.update(job.id, (current) => ({ job: { ...current, ...cleared }, result: null }));
      expect((await repo.load()).jobs).toEqual([{ ...job, ...cleared }]);
    });

    it('lists jobs in the order they were created', async () => {
      for (const n of [3, 1, 2]) await repo.create(anHourlyJob(jobIdFor(n)), true);
      expect((await repo.load()).jobs.map((job) => job.id)).toEqual([jobIdFor(3), jobIdFor(1), jobIdFor(2)]);
    });

    it('refuses a chosen name another job holds, whatever its case, and stores nothing', async () => {
      await repo.create({ ...anHourlyJob(jobIdFor(1)), name: 'Digest' }, true);
      await expect(repo.create({ ...anHourlyJob(jobIdFor(2)), name: 'digest' }, true)).rejects.toMatchObject({ code: 'JOB.NAME_TAKEN' });
      expect(ids((await repo.load()).jobs)).toEqual([jobIdFor(1)]);
    });

    it('numbers a default name until it is free', async () => {
      await repo.create({ ...anHourlyJob(jobIdFor(1)), name: 'Report' }, false);
      await repo.create({ ...anHourlyJob(jobIdFor(2)), name: 'Report' }, false);
      const third = await repo.create({ ...anHourlyJob(jobIdFor(3)), name: 'report' }, false);
      expect(third.name).toBe('report (3)');
      expect((await repo.load()).jobs.map((job) => job.name)).toEqual(['Report', 'Report (2)', 'report (3)']);
    });

    it('changes the job a reference names, by id or by name in any case, and returns the result', async () => {
      const job = await repo.create({ ...anHourlyJob(jobIdFor(1)), name: 'Digest' }, true);
      const pausedAt = new Date(CREATED_AT.getTime() + 60_000);
      await expect(repo.update('DIGEST', (current) => ({ job: pauseJob(current, pausedAt), result: 'paused' }))).resolves.toBe('paused');
      expect(await repo.findById(job.id)).toEqual(pauseJob(job, pausedAt));
      await repo.update(job.id, (current) => ({ job: { ...current, prompt: 'new prompt' }, result: null }));
      expect((await repo.findById(job.id))!.prompt).toBe('new prompt');
    });

    it('says when a reference names no job, and changes nothing', async () => {
      await repo.create(anHourlyJob(jobIdFor(1)), true);
      await expect(repo.update('nope', (job) => ({ job, result: null }))).rejects.toMatchObject({ code: 'JOB.NOT_FOUND' });
      await expect(repo.remove('nope')).rejects.toMatchObject({ code: 'JOB.NOT_FOUND' });
      expect(ids((await repo.load()).jobs)).toEqual([jobIdFor(1)]);
    });

    it('refuses a rename to a name another job holds, and keeps both as they were', async () => {
      const a = await repo.create({ ...anHourlyJob(jobIdFor(1)), name: 'alpha' }, true);
      const b = await repo.create({ ...anHourlyJob(jobIdFor(2)), name: 'beta' }, true);
      await expect(repo.update('beta', (job) => ({ job: { ...job, name: 'ALPHA' }, result: null }))).rejects.toMatchObject({
        code: 'JOB.NAME_TAKEN',
      });
      expect((await repo.load()).jobs).toEqual([a, b]);
      // A job may change the case of its own name.
      await repo.update('alpha', (job) => ({ job: { ...job, name: 'Alpha' }, result: null }));
      expect((await repo.findById(a.id))!.name).toBe('Alpha');
    });

    it('updates by id only when the job exists, without calling the change otherwise', async () => {
      let called = false;
      await expect(
        repo.updateById(jobIdFor(9), (job) => {
          called = true;
          return { job, result: 'x' };
        }),
      ).resolves.toBeNull();
      expect(called).toBe(false);
      const job = await repo.create(anHourlyJob(jobIdFor(1)), true);
      await expect(repo.updateById(job.id, (current) => ({ job: { ...current, prompt: 'p2' }, result: 'done' }))).resolves.toBe('done');
      expect((await repo.findById(job.id))!.prompt).toBe('p2');
    });

    it('removes the job a reference names and returns it', async () => {
      const a = await repo.create({ ...anHourlyJob(jobIdFor(1)), name: 'alpha' }, true);
      await repo.create(anHourlyJob(jobIdFor(2)), true);
      await expect(repo.remove('Alpha')).resolves.toEqual(a);
      expect(ids((await repo.load()).jobs)).toEqual([jobIdFor(2)]);
      expect(await repo.findById(a.id)).toBeNull();
    });

    it('stores nothing when a change throws, and keeps working', async () => {
      const job = await repo.create(anHourlyJob(jobIdFor(1)), true);
      const failure = new Error('the change failed');
      await expect(
        repo.update(job.id, () => {
          throw failure;
        }),
      ).rejects.toBe(failure);
      await expect(
        repo.settleDue(at(10), 10, () => {
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect((await repo.load()).jobs).toEqual([job]);
      await repo.create(anHourlyJob(jobIdFor(2)), true);
      expect((await repo.load()).jobs).toHaveLength(2);
    });

    it('loses no update when many changes run at once', async () => {
      const created = Array.from({ length: 30 }, (_, n) => jobIdFor(n + 1));
      await Promise.all(created.map((id) => repo.create(anHourlyJob(id), true)));
      expect(ids((await repo.load()).jobs)).toEqual(created);
      const target = created[0]!;
      await Promise.all(
        Array.from({ length: 30 }, () =>
          repo.updateById(target, (job) => ({
            job: { ...job, repeat: { ...job.repeat, completed: job.repeat.completed + 1 } },
            result: null,
          })),
        ),
      );
      expect((await repo.findById(target))!.repeat.completed).toBe(30);
    });

    it('gives the earliest next run of the scheduled, enabled jobs, after an instant when asked', async () => {
      await repo.create(dueIn(jobIdFor(1), 3), true);
      await repo.create(dueIn(jobIdFor(2), 2), true);
      await repo.create(pauseJob(dueIn(jobIdFor(3), 1), CREATED_AT), true);
      expect(await repo.nextRunAt()).toEqual(at(2));
      expect(await repo.nextRunAt(at(2))).toEqual(at(3));
      expect(await repo.nextRunAt(at(3))).toBeNull();
    });

    it('peeks at whether anything is due and which jobs are running', async () => {
      await repo.create(dueIn(jobIdFor(1), 2), true);
      const running = claimJob(dueIn(jobIdFor(2), 1), 'host:1', at(1), 'UTC');
      await repo.create(running, true);
      expect(await repo.peek(at(1))).toEqual({ anyDue: false, running: [running] });
      expect((await repo.peek(at(2))).anyDue).toBe(true);
    });

    it('hands a tick the running jobs and the due ones, earliest first, at most the limit, and stores what it changed', async () => {
      await repo.create(dueIn(jobIdFor(1), 3), true);
      await repo.create(dueIn(jobIdFor(2), 1), true);
      await repo.create(dueIn(jobIdFor(3), 2), true);
      await repo.create(dueIn(jobIdFor(4), 9), true);
      await repo.create(pauseJob(dueIn(jobIdFor(5), 1), CREATED_AT), true);
      const running = claimJob(dueIn(jobIdFor(6), 1), 'host:1', at(1), 'UTC');
      await repo.create(running, true);

      const seen = await repo.settleDue(at(5), 2, ({ running: busy, due }) => {
        const claimed = due.map((job) => claimJob(job, 'host:2', at(5), 'UTC'));
        return { changed: claimed, result: { running: busy.map((job) => job.id), due: due.map((job) => job.id) } };
      });

      expect(seen).toEqual({ running: [jobIdFor(6)], due: [jobIdFor(2), jobIdFor(3)] });
      const stored = new Map((await repo.load()).jobs.map((job) => [job.id, job]));
      expect(stored.get(jobIdFor(2))!.state).toBe('running');
      expect(stored.get(jobIdFor(3))!.claim).toEqual({ by: 'host:2', at: '2026-03-01T17:00:00Z' });
      expect(stored.get(jobIdFor(1))!.state).toBe('scheduled');
    });

    it('hands a tick that does not ask for the running jobs only the due ones', async () => {
      await repo.create(dueIn(jobIdFor(1), 1), true);
      await repo.create(claimJob(dueIn(jobIdFor(2), 1), 'host:1', at(1), 'UTC'), true);

      const seen = await repo.settleDue(
        at(5),
        5,
        ({ running, due }) => ({
          changed: due.map((job) => claimJob(job, 'host:2', at(5), 'UTC')),
          result: { running: running.length, due: due.map((job) => job.id) },
        }),
        { running: false },
      );

      expect(seen).toEqual({ running: 0, due: [jobIdFor(1)] });
      expect((await repo.findById(jobIdFor(1)))!.claim).toEqual({ by: 'host:2', at: '2026-03-01T17:00:00Z' });
    });

    it('never hands one due job to two ticks running at once', async () => {
      for (let n = 1; n <= 20; n += 1) await repo.create(dueIn(jobIdFor(n), 1), true);
      const tick = (claimant: string) =>
        repo.settleDue(at(2), 5, ({ due }) => ({
          changed: due.map((job) => claimJob(job, claimant, at(2), 'UTC')),
          result: due.map((job) => job.id),
        }));
      const handed = (await Promise.all(['a:1', 'b:2', 'c:3', 'd:4', 'e:5', 'f:6'].map(tick))).flat();
      expect(new Set(handed).size).toBe(handed.length);
      const claimed = (await repo.load()).jobs.filter((job) => job.state === 'running');
      expect(claimed).toHaveLength(handed.length);
      expect(handed.length).toBeLessThanOrEqual(20);
    });

    it('hands out copies: changing a loaded job does not change the store', async () => {
      await repo.create(anHourlyJob(jobIdFor(1)), true);
      const loaded = await repo.load();
      loaded.jobs[0]!.name = 'renamed behind the store';
      expect((await repo.load()).jobs[0]!.name).toBe(`job ${jobIdFor(1)}`);
    });
  });
}
