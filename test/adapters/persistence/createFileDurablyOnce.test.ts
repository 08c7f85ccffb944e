import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileDurablyOnce } from '../../../src/adapters/persistence/fileSystem.js';

describe('createFileDurablyOnce', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'agent-create-once-'));
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it('creates the file once of many creating it at the same moment, whole, and leaves no temporary file', async () => {
    const path = join(directory, 'marker');

    const created = await Promise.all(Array.from({ length: 10 }, (_, i) => createFileDurablyOnce(path, `writer ${i}\n`)));

    expect(created.filter((made) => made)).toHaveLength(1);
    expect(await readFile(path, 'utf8')).toBe(`writer ${created.indexOf(true)}\n`);
    expect(await readdir(directory)).toEqual(['marker']);
  });

  it('never replaces a file that is there', async () => {
    const path = join(directory, 'marker');
    await writeFile(path, 'first\n');

    expect(await createFileDurablyOnce(path, 'second\n')).toBe(false);
    expect(await readFile(path, 'utf8')).toBe('first\n');
  });

  it('fails with the file system error when the directory is missing', async () => {
    await expect(createFileDurablyOnce(join(directory, 'missing', 'marker'), 'x')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
