import { basename } from 'node:path';
import 'reflect-metadata';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileRunOutputStore } from '../../src/adapters/persistence/FileRunOutputStore.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import type { AgentPaths } from '../../src/application/ports/Settings.js';
import { InvalidInputError } from '../../src/domain/errors.js';

const JOB = 'a1b2c3d4e5f6';
const reportName = (minute: number) => `2026-03-01_12-${String(minute).padStart(2, '0')}-00.md`;

describe('FileRunOutputStore', () => {
  let home: string;
  let paths: AgentPaths;
  let store: FileRunOutputStore;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-output-'));
    paths = agentPathsFor(home);
    store = new FileRunOutputStore(paths);
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  const jobDirectory = () => join(paths.outputDir, JOB);

  it('writes the report to cron/output/<job id>/<file name> and returns that path', async () => {
    const path = await store.save(JOB, reportName(0), '# Report\n', 50);
    expect(path).toBe(join(home, 'cron', 'output', JOB, reportName(0)));
    expect(await readFile(path, 'utf8')).toBe('# Report\n');
  });

  it('creates its directories with mode 0700 and the report with mode 0600', async () => {
    const path = await store.save(JOB, reportName(0), 'x', 50);
    for (const directory of [paths.cronDir, paths.outputDir, jobDirectory()]) {
      expect((await stat(directory)).mode & 0o777).toBe(0o700);
    }
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('keeps a report of the same name (two runs in one second) and writes the new one beside it, 0600', async () => {
    const first = await store.save(JOB, reportName(0), 'first', 50);
    const second = await store.save(JOB, reportName(0), 'second', 50);

    expect(second).not.toBe(first);
    expect(await readFile(first, 'utf8')).toBe('first');
    expect(await readFile(second, 'utf8')).toBe('second');
    expect((await stat(second)).mode & 0o777).toBe(0o600);
    // Newest first: the second run is listed before the first.
    expect(await store.list(JOB)).toEqual([basename(second), basename(first)]);
  });

  it('keeps only the newest `keep` reports, by name', async () => {
    for (const minute of [3, 1, 4, 2, 5]) await store.save(JOB, reportName(minute), `run ${minute}`, 3);
    expect((await readdir(jobDirectory())).sort()).toEqual([reportName(3), reportName(4), reportName(5)]);
  });

  it('never deletes the report it has just written, even when its name sorts first', async () => {
    for (const minute of [4, 5]) await store.save(JOB, reportName(minute), 'later', 2);
    const path = await store.save(JOB, reportName(1), 'written after a clock was set back', 2);
    expect(await readFile(path, 'utf8')).toBe('written after a clock was set back');
    expect((await readdir(jobDirectory())).sort()).toEqual([reportName(1), reportName(5)]);
  });

  it("leaves other jobs' reports alone when pruning", async () => {
    await store.save('other0000001', reportName(0), 'other', 1);
    await store.save(JOB, reportName(1), 'one', 1);
    await store.save(JOB, reportName(2), 'two', 1);
    expect(await readdir(join(paths.outputDir, 'other0000001'))).toEqual([reportName(0)]);
  });

  it('removeAll deletes the job directory with everything in it', async () => {
    await store.save(JOB, reportName(0), 'x', 50);
    await writeFile(join(jobDirectory(), 'notes.txt'), 'left by someone');
    await store.removeAll(JOB);
    await expect(stat(jobDirectory())).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('removeAll does nothing when the job has no reports', async () => {
    await expect(store.removeAll(JOB)).resolves.toBeUndefined();
  });

  it.each(['..', '.', '', '../escape', 'a/b', 'a\\b'])('refuses the job id %j', async (jobId) => {
    await expect(store.save(jobId, reportName(0), 'x', 50)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(store.removeAll(jobId)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(store.list(jobId)).rejects.toBeInstanceOf(InvalidInputError);
  });

  it.each(['..', '../../jobs.json', 'sub/report.md'])('refuses the file name %j', async (fileName) => {
    await expect(store.save(JOB, fileName, 'x', 50)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(store.read(JOB, fileName)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(readdir(home)).resolves.toEqual([]);
  });

  it('lists and reads without creating anything, and leaves out files that are not reports', async () => {
    expect(await store.list(JOB)).toEqual([]);
    await expect(readdir(home)).resolves.toEqual([]);

    const path = await store.save(JOB, reportName(1), '# Report\n', 50);
    await writeFile(join(jobDirectory(), 'notes.txt'), 'left by someone');
    await writeFile(join(jobDirectory(), `.${reportName(2)}.tmp`), 'half');

    expect(await store.list(JOB)).toEqual([reportName(1)]);
    expect(await store.read(JOB, reportName(1))).toEqual({ fileName: reportName(1), location: path, content: '# Report\n' });
  });
});
