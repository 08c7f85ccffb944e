import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { FileJobRepository } from '../../../src/adapters/persistence/FileJobRepository.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { anHourlyJob, jobIdFor } from '../../support/jobs.js';

/*
 * jobs.json is parsed once per version of the file: reads of an unchanged file share what was
 * read, and any change — this process's, another's, or an edit in place — is read afresh.
 */
describe('FileJobRepository: reads', () => {
  let home: string;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-job-reads-'));
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('parses an unchanged file once, and sees what another client or an edit in place wrote', async () => {
    const paths = agentPathsFor(home);
    const mine = new FileJobRepository(paths);
    const other = new FileJobRepository(paths);
    const job = await mine.create(anHourlyJob(jobIdFor(1)), true);
    const reads = jest.spyOn(mine as unknown as { readFile: () => Promise<unknown> }, 'readFile');

    await Promise.all([mine.findById(job.id), mine.followersOf(job.id), mine.load(), mine.peek(new Date())]);
    await mine.findById(job.id);
    expect(reads).toHaveBeenCalledTimes(1);

    await other.update(job.id, (current) => ({ job: { ...current, prompt: 'Changed elsewhere' }, result: null }));
    expect(await mine.findById(job.id)).toMatchObject({ prompt: 'Changed elsewhere' });

    const text = await readFile(paths.jobsFile, 'utf8');
    await writeFile(paths.jobsFile, text.replace('Changed elsewhere', 'Edited in place!!'));
    expect(await mine.findById(job.id)).toMatchObject({ prompt: 'Edited in place!!' });
    expect(reads).toHaveBeenCalledTimes(3);
  });

  it('hands each caller a job of its own', async () => {
    const store = new FileJobRepository(agentPathsFor(home));
    const job = await store.create(anHourlyJob(jobIdFor(1)), true);
    const found = (await store.findById(job.id))!;
    found.prompt = 'changed by a caller';
    expect((await store.findById(job.id))!.prompt).toBe(job.prompt);
  });
});
