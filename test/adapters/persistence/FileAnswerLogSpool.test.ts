import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileAnswerLogSpool, type SpooledAnswer } from '../../../src/adapters/persistence/FileAnswerLogSpool.js';

describe('FileAnswerLogSpool', () => {
  let directory: string;

  beforeEach(async () => {
    directory = join(await mkdtemp(join(tmpdir(), 'agent-answer-spool-')), 'answer-log');
  });
  afterEach(async () => {
    await rm(join(directory, '..'), { recursive: true, force: true });
  });

  it('hands an answer to the gateway that serves the spool, once, and leaves nothing behind', async () => {
    const written: SpooledAnswer[] = [];
    const stop = await new FileAnswerLogSpool(directory).serve(
      (answer) => written.push(answer),
      (problem) => written.push({ route: 'problem', text: problem, about: {} }),
    );
    try {
      const taken = await new FileAnswerLogSpool(directory).handOver(
        { route: 'notes', text: 'Answer to: Note 9', about: { event_id: 'e1' } },
        10_000,
      );

      expect(taken).toBe(true);
      expect(written).toEqual([{ route: 'notes', text: 'Answer to: Note 9', about: { event_id: 'e1' } }]);
      expect(await readdir(directory)).toEqual([]);
    } finally {
      stop();
    }
  });

  it('withdraws an answer nobody takes in time, so that no gateway started later writes it too', async () => {
    const spool = new FileAnswerLogSpool(directory);

    expect(await spool.handOver({ route: 'notes', text: 'x', about: {} }, 50)).toBe(false);
    expect(await readdir(directory)).toEqual([]);
    const written: SpooledAnswer[] = [];
    const stop = await spool.serve(
      (answer) => written.push(answer),
      () => undefined,
    );
    stop();
    expect(written).toEqual([]);
  });
});
