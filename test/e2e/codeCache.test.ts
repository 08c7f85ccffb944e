import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJob, inAScratchHomeEachTest, runAgent } from './agentCli.js';

/**
 * The packages every command loads come from one script compiled with V8's code cache, kept in
 * the user's cache directory (scripts/vendorLoader.mjs). The cache only saves time: a command
 * prints the same with it, without it, when it cannot be written, and when it is damaged.
 */
describe('the code cache of the bundle', () => {
  let home: string;
  inAScratchHomeEachTest((scratch) => (home = scratch));
  let cacheHome: string;

  beforeEach(async () => {
    cacheHome = await mkdtemp(join(tmpdir(), 'agent-cache-'));
  });
  afterEach(async () => {
    await rm(cacheHome, { recursive: true, force: true });
  });

  const list = (xdgCacheHome: string) => runAgent(['cron', 'list'], { home, env: { XDG_CACHE_HOME: xdgCacheHome } });
  const cacheFiles = async () => (await readdir(join(cacheHome, 'agent', 'code-cache'))).filter((name) => name.endsWith('.bin'));

  it('is written by the first command and read by the next, which prints the same', async () => {
    await createJob(home, ['every 2h', 'Summarise', '--name', 'digest']);

    const first = await list(cacheHome);
    const [file] = await cacheFiles();
    const second = await list(cacheHome);

    expect(first).toEqual({ code: 0, stdout: expect.stringContaining('digest'), stderr: '' });
    expect(file).toMatch(/^vendor-[0-9a-f]{12}\.cjs-v\d+\.\d+\.\d+-\w+-[0-9a-f]{8}\.bin$/);
    expect(second).toEqual(first);
    expect(await cacheFiles()).toEqual([file]);
  });

  it('is done without when the cache directory cannot be made', async () => {
    await createJob(home, ['every 2h', 'Summarise', '--name', 'digest']);
    // A file where the directory would go: not even root can create it.
    const blocked = join(cacheHome, 'not-a-directory');
    await writeFile(blocked, '');

    const run = await list(blocked);

    expect(run).toEqual({ code: 0, stdout: expect.stringContaining('digest'), stderr: '' });
    expect(await readFile(blocked, 'utf8')).toBe('');
  });

  it('is made anew when it was damaged', async () => {
    await createJob(home, ['every 2h', 'Summarise', '--name', 'digest']);
    const first = await list(cacheHome);
    const path = join(cacheHome, 'agent', 'code-cache', (await cacheFiles())[0]!);
    const damaged = await readFile(path);
    // Past the checksum, inside V8's data: V8 itself checks only the header.
    for (let at = Math.floor(damaged.length / 2); at < Math.floor(damaged.length / 2) + 64; at += 1) damaged[at]! ^= 0xff;
    await writeFile(path, damaged);

    const second = await list(cacheHome);

    expect(second).toEqual(first);
    expect((await readFile(path)).equals(damaged)).toBe(false);
  });
});
