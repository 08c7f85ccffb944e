import 'reflect-metadata';
import { chmod, chown, mkdir, mkdtemp, open, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileJobRepository } from '../../src/adapters/persistence/FileJobRepository.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { tryLockFile } from '../../src/adapters/persistence/fileLock.js';
import { JobStoreDamagedError, JobStoreUnavailableError } from '../../src/application/ports/JobRepository.js';
import type { AgentPaths } from '../../src/application/ports/Settings.js';
import type { Job } from '../../src/domain/Job.js';
import { pauseJob } from '../../src/domain/jobLifecycle.js';
import { bundleScript } from '../support/bundleScript.js';
import { runNode } from '../support/childProcesses.js';
import { eventually } from '../support/processLiveness.js';
import { CREATED_AT, anHourlyJob, jobIdFor } from '../support/jobs.js';
import { spawn } from '../support/testProcesses.js';

const isRoot = process.getuid?.() === 0;
/** The user `nobody`, whom a test run as root hands a home to. */
const NOBODY = 65534;
const pausedAt = new Date(CREATED_AT.getTime() + 60_000);
const pauseAll = (jobs: readonly Job[]) => ({ jobs: jobs.map((job) => pauseJob(job, pausedAt)), result: undefined });
const append = (job: Job) => (jobs: readonly Job[]) => ({ jobs: [...jobs, job], result: undefined });
const rewriteAsIs = (jobs: readonly Job[]) => ({ jobs: [...jobs], result: undefined });

/** A record as an older or newer version of the service might have written it. */
function storedRecord(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  // A job at rest is written without its (null) claim.
  const { claim: _idle, ...atRest } = JSON.parse(JSON.stringify(anHourlyJob(id))) as Record<string, unknown>;
  return { ...atRest, ...extra };
}

describe('FileJobRepository', () => {
  let home: string;
  let paths: AgentPaths;
  let repo: FileJobRepository;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-jobs-'));
    paths = agentPathsFor(home);
    repo = new FileJobRepository(paths);
  });

  afterEach(async () => {
    await chmod(home, 0o700).catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  });

  const storedText = () => readFile(paths.jobsFile, 'utf8');
  const storedDocument = async () => JSON.parse(await storedText()) as { jobs: unknown[]; updated_at: string } & Record<string, unknown>;
  const writeStore = async (document: unknown) => {
    await mkdir(paths.cronDir, { recursive: true });
    await writeFile(paths.jobsFile, JSON.stringify(document));
  };

  describe('file format', () => {
    it('writes {"jobs": [...], "updated_at": <ISO in UTC>} indented by two spaces', async () => {
      const job = anHourlyJob(jobIdFor(1));
      await repo.modify(append(job));

      const text = await storedText();
      const document = JSON.parse(text) as { jobs: unknown[]; updated_at: string };
      expect(Object.keys(document)).toEqual(['jobs', 'updated_at']);
      const { claim: _idle, ...atRest } = JSON.parse(JSON.stringify(job)) as Record<string, unknown>;
      expect(document.jobs).toEqual([atRest]);
      expect(document.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(text).toBe(`${JSON.stringify(document, null, 2)}\n`);
    });

    it('writes a claim only while a run holds the job, and reads a record without one as unclaimed', async () => {
      const job = anHourlyJob(jobIdFor(1));
      await repo.modify(append(job));
      const claim = { by: 'host:42', at: '2026-06-01T09:00:00Z' };
      await repo.modify((jobs) => ({ jobs: jobs.map((each) => ({ ...each, state: 'running' as const, claim })), result: undefined }));
      expect((await storedDocument()).jobs[0]).toMatchObject({ state: 'running', claim });

      await repo.modify((jobs) => ({
        jobs: jobs.map((each) => ({ ...each, state: 'scheduled' as const, claim: null })),
        result: undefined,
      }));

      expect((await storedDocument()).jobs[0]).not.toHaveProperty('claim');
      expect((await repo.load()).jobs[0]!.claim).toBeNull();
    });

    it('creates cron/ with mode 0700 and jobs.json with mode 0600', async () => {
      await repo.modify(append(anHourlyJob(jobIdFor(1))));
      expect((await stat(paths.cronDir)).mode & 0o777).toBe(0o700);
      expect((await stat(paths.jobsFile)).mode & 0o777).toBe(0o600);
    });

    it('narrows a jobs.json that someone made world-readable back to 0600 on the next write', async () => {
      await repo.modify(append(anHourlyJob(jobIdFor(1))));
      await chmod(paths.jobsFile, 0o644);
      await repo.modify(append(anHourlyJob(jobIdFor(2))));
      expect((await stat(paths.jobsFile)).mode & 0o777).toBe(0o600);
    });

    it('leaves no temporary file behind; the lock stays as an empty file', async () => {
      await repo.modify(append(anHourlyJob(jobIdFor(1))));
      expect((await readdir(paths.cronDir)).sort()).toEqual(['jobs.json', 'jobs.json.lock']);
    });

    it('does not create jobs.json for a change that returns the jobs it was given', async () => {
      await repo.modify((jobs) => ({ jobs, result: undefined }));
      await expect(stat(paths.jobsFile)).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('reads a bare array of records and rewrites it in the object form', async () => {
      await writeStore([storedRecord(jobIdFor(1))]);
      expect((await repo.load()).jobs.map((job) => job.id)).toEqual([jobIdFor(1)]);

      await repo.modify(rewriteAsIs);
      const document = await storedDocument();
      expect(document.jobs).toEqual([storedRecord(jobIdFor(1))]);
      expect(typeof document.updated_at).toBe('string');
    });

    it('keeps record fields and top-level fields it does not know when it rewrites', async () => {
      const future = { retries: { max: 3 }, note: 'written by a newer agent' };
      await writeStore({ version: 2, jobs: [storedRecord(jobIdFor(1), future)], updated_at: '2026-01-01T00:00:00.000Z' });

      await repo.modify(pauseAll);

      const document = await storedDocument();
      expect(document.version).toBe(2);
      expect(document.jobs[0]).toMatchObject({ ...future, state: 'paused', enabled: false });
    });

    it('reads a legacy "skill" as skills: [skill] and writes it back in that form', async () => {
      const legacy = storedRecord(jobIdFor(1), { skill: 'weather' });
      delete legacy.skills;
      await writeStore({ jobs: [legacy] });
      expect((await repo.load()).jobs[0]?.skills).toEqual(['weather']);

      await repo.modify(rewriteAsIs);

      const [record] = (await storedDocument()).jobs as Array<Record<string, unknown>>;
      expect(record?.skills).toEqual(['weather']);
      expect(record).not.toHaveProperty('skill');
    });

    it('reads a record written before jobs had a time zone of their own as in the configured zone', async () => {
      const older = storedRecord(jobIdFor(1));
      delete older.timezone;
      await writeStore({ jobs: [older] });
      expect((await repo.load()).jobs[0]?.timezone).toBeNull();
    });
  });

  describe('unreadable records', () => {
    const noSchedule = { id: 'bad000000001', prompt: 'a job with a schedule nobody understands', schedule: { kind: 'lunar' } };
    const notAnObject = 42;

    beforeEach(async () => {
      await writeStore({ jobs: [storedRecord(jobIdFor(1)), noSchedule, storedRecord(jobIdFor(2)), notAnObject] });
    });

    it('reports them and still loads the other jobs', async () => {
      const snapshot = await repo.load();
      expect(snapshot.jobs.map((job) => job.id)).toEqual([jobIdFor(1), jobIdFor(2)]);
      expect(snapshot.unreadable).toEqual([
        { index: 1, id: 'bad000000001', reason: expect.any(String) },
        { index: 3, id: null, reason: expect.any(String) },
      ]);
    });

    it('writes them back unchanged, where they were, when the other jobs change', async () => {
      await repo.modify(pauseAll);

      const { jobs } = await storedDocument();
      expect(jobs).toEqual([
        expect.objectContaining({ id: jobIdFor(1), state: 'paused' }),
        noSchedule,
        expect.objectContaining({ id: jobIdFor(2), state: 'paused' }),
        notAnObject,
      ]);
    });

    it('keeps them after the job they followed is removed', async () => {
      await repo.modify((jobs) => ({ jobs: jobs.filter((job) => job.id !== jobIdFor(1)), result: undefined }));

      expect((await storedDocument()).jobs).toEqual([noSchedule, expect.objectContaining({ id: jobIdFor(2) }), notAnObject]);
      expect((await repo.load()).unreadable.map((problem) => problem.id)).toEqual(['bad000000001', null]);
    });
  });

  describe('a damaged file', () => {
    it.each([
      ['is not JSON', '{"jobs": [ {"id": "abc"'],
      ['is empty', ''],
      ['holds JSON of another shape', '{"tasks": []}'],
      ['holds a bare string', '"jobs"'],
    ])('is reported as damaged and left byte for byte as it was when it %s', async (_, content) => {
      await mkdir(paths.cronDir, { recursive: true });
      await writeFile(paths.jobsFile, content);

      await expect(repo.load()).rejects.toBeInstanceOf(JobStoreDamagedError);
      await expect(repo.modify(append(anHourlyJob(jobIdFor(1))))).rejects.toBeInstanceOf(JobStoreDamagedError);

      expect(await storedText()).toBe(content);
      expect((await readdir(paths.cronDir)).sort()).toEqual(['jobs.json', 'jobs.json.lock']);
    });

    it('names the file in its message', async () => {
      await mkdir(paths.cronDir, { recursive: true });
      await writeFile(paths.jobsFile, 'not json');
      await expect(repo.load()).rejects.toThrow(paths.jobsFile);
    });
  });

  describe('an unusable home', () => {
    it('is reported as unavailable, naming the path, when a file stands where cron/ should be', async () => {
      await writeFile(paths.cronDir, 'not a directory');

      const modifying = repo.modify(append(anHourlyJob(jobIdFor(1))));
      await expect(modifying).rejects.toBeInstanceOf(JobStoreUnavailableError);
      await expect(modifying).rejects.toThrow(`Cannot write the job store ${paths.jobsFile}`);
      await expect(modifying).rejects.toThrow(`make ${paths.cronDir} a directory this user can write to`);
      await expect(repo.load()).rejects.toBeInstanceOf(JobStoreUnavailableError);
    });

    it('is reported as unavailable when the home directory is read-only', async () => {
      const unavailable = new JobStoreUnavailableError(
        `Cannot write the job store ${paths.jobsFile}: this user lacks permission there (EACCES); make ${paths.cronDir} a directory this user can write to, or set AGENT_HOME to one.`,
      );
      if (!isRoot) {
        await chmod(home, 0o500);
        await expect(repo.modify(append(anHourlyJob(jobIdFor(1))))).rejects.toThrow(unavailable);
        return;
      }
      // Root, whom file modes do not stop: the change is made by a process running as nobody, in a
      // home nobody owns and may not write to.
      const appender = await bundleScript(fileURLToPath(new URL('../support/appendJobChild.ts', import.meta.url)), home);
      await chown(home, NOBODY, NOBODY);
      await chmod(home, 0o500);

      const ran = await runNode(appender, [home, jobIdFor(1)], { uid: NOBODY, gid: NOBODY });

      expect(ran.code).not.toBe(0);
      expect(ran.stderr).toContain(unavailable.message);
    });
  });

  describe('the cross-process lock', () => {
    it('replaces the lock directory an earlier version left behind', async () => {
      await mkdir(`${paths.jobsFile}.lock`, { recursive: true });

      await repo.modify(append(anHourlyJob(jobIdFor(1))));

      expect((await repo.load()).jobs).toHaveLength(1);
    });

    /** A writer stalled inside its change, holding the lock with the snapshot it read. */
    async function stalledWriter(id: string) {
      const script = await bundleScript(fileURLToPath(new URL('../support/stallInModifyChild.ts', import.meta.url)), home);
      const child = spawn(process.execPath, [script, home, id], { stdio: ['ignore', 'pipe', 'pipe'] });
      const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      expect(await eventually(() => out.includes('holding'), 10_000)).toBe(true);
      return { child, exit };
    }

    it("never lets a writer stopped while holding the lock lose another process's change", async () => {
      await repo.modify(append(anHourlyJob(jobIdFor(1))));
      const stalled = await stalledWriter(jobIdFor(2));
      stalled.child.kill('SIGSTOP');
      const appender = await bundleScript(fileURLToPath(new URL('../support/appendJobChild.ts', import.meta.url)), home);
      const other = runNode(appender, [home, jobIdFor(3)]);
      let otherDone = false;
      void other.then(() => (otherDone = true));

      // However long the holder is stopped (here longer than a lock-file staleness period of
      // 10 s would allow), nobody takes its lock over.
      expect(await eventually(() => otherDone, 12_000, 100)).toBe(false);
      stalled.child.kill('SIGCONT');
      await writeFile(join(home, 'go'), '');

      expect(await stalled.exit).toBe(0);
      expect((await other).code).toBe(0);
      expect((await repo.load()).jobs.map((job) => job.id).sort()).toEqual([jobIdFor(1), jobIdFor(2), jobIdFor(3)]);
    }, 120_000);

    it('frees the lock the moment its holder is killed', async () => {
      /** One attempt to take the store's lock, without waiting; released at once. */
      const lockIsFree = async () => {
        const lockFile = await open(`${paths.jobsFile}.lock`, 'r+');
        try {
          return await tryLockFile(lockFile);
        } finally {
          await lockFile.close();
        }
      };
      const stalled = await stalledWriter(jobIdFor(1));
      expect(await lockIsFree()).toBe(false);
      stalled.child.kill('SIGKILL');
      await stalled.exit;

      // Not after a staleness period: at once, to the first attempt that does not wait.
      expect(await lockIsFree()).toBe(true);
      await repo.modify(append(anHourlyJob(jobIdFor(2))));
      expect((await repo.load()).jobs.map((job) => job.id)).toEqual([jobIdFor(2)]);
    }, 120_000);

    it('loses no job when twenty processes each append one at the same moment', async () => {
      const child = await bundleScript(fileURLToPath(new URL('../support/appendJobChild.ts', import.meta.url)), home);
      const ids = Array.from({ length: 20 }, (_, n) => jobIdFor(n + 1));

      const exits = await Promise.all(ids.map((id) => runNode(child, [home, id])));

      expect(exits.filter((exit) => exit.code !== 0)).toEqual([]);
      const stored = (await repo.load()).jobs.map((job) => job.id);
      expect([...stored].sort()).toEqual(ids);
      // Twenty node processes start on a machine that may have two busy cores: a generous deadline.
    }, 180_000);
  });
});
