import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { FileJobRepository } from '../../../src/adapters/persistence/FileJobRepository.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { anHourlyJob, jobIdFor } from '../../support/jobs.js';

/*
 * Changes to jobs.json asked for at once share one turn of the file: one lock, one read, one
 * synced write. None is lost, each caller gets its own result once the write is on disk, and a
 * change that throws leaves the others standing.
 */
describe('FileJobRepository: changes asked for at once', () => {
  let home: string;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-job-batches-'));
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('writes the file a few times for two hundred changes, and loses none', async () => {
    const store = new FileJobRepository(agentPathsFor(home));
    for (let n = 1; n <= 200; n += 1) await store.create(anHourlyJob(jobIdFor(n)), true);
    const writes = jest.spyOn(store as unknown as { write: (text: string) => Promise<void> }, 'write');

    const results = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        store.updateById(jobIdFor(index + 1), (job) => ({ job: { ...job, prompt: `changed ${index + 1}` }, result: index + 1 })),
      ),
    );

    expect(results).toEqual(Array.from({ length: 200 }, (_, index) => index + 1));
    expect(writes.mock.calls.length).toBeLessThanOrEqual(3);
    const reread = await new FileJobRepository(agentPathsFor(home)).load();
    expect(reread.jobs.map((job) => job.prompt)).toEqual(Array.from({ length: 200 }, (_, index) => `changed ${index + 1}`));
  });

  it('passes a throwing change its own error and writes the others', async () => {
    const store = new FileJobRepository(agentPathsFor(home));
    await store.create(anHourlyJob(jobIdFor(1)), true);
    await store.create(anHourlyJob(jobIdFor(2)), true);

    const [first, refused, second] = await Promise.allSettled([
      store.updateById(jobIdFor(1), (job) => ({ job: { ...job, prompt: 'one' }, result: 'one' })),
      store.updateById(jobIdFor(1), () => {
        throw new Error('refused');
      }),
      store.updateById(jobIdFor(2), (job) => ({ job: { ...job, prompt: 'two' }, result: 'two' })),
    ]);

    expect(first).toEqual({ status: 'fulfilled', value: 'one' });
    expect(refused).toMatchObject({ status: 'rejected', reason: new Error('refused') });
    expect(second).toEqual({ status: 'fulfilled', value: 'two' });
    expect((await store.load()).jobs.map((job) => job.prompt)).toEqual(['one', 'two']);
  });
});
