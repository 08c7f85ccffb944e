import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { FileWorkingDirectories } from '../../../src/adapters/persistence/FileWorkingDirectories.js';

describe('FileWorkingDirectories: a job’s working folder on disk', () => {
  let root: string;
  let home: string;
  let folders: FileWorkingDirectories;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'workdirs-'));
    home = join(root, 'home');
    await mkdir(join(home, 'workspace', 'site'), { recursive: true });
    await mkdir(join(root, 'project'));
    folders = new FileWorkingDirectories(agentPathsFor(home));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('takes an absolute folder as it is, and reads a relative one from the workspace', async () => {
    expect(await folders.check(join(root, 'project'))).toBe(join(root, 'project'));
    expect(await folders.check('site')).toBe(join(home, 'workspace', 'site'));
    expect(await folders.check(join(home, 'workspace'))).toBe(join(home, 'workspace'));
  });

  it('refuses, in one sentence each, a folder that does not exist and a file', async () => {
    await expect(folders.check(join(root, 'gone'))).rejects.toThrow(
      `The working folder ${join(root, 'gone')} does not exist; create it first, or name an existing folder.`,
    );
    await writeFile(join(root, 'file.txt'), 'x');
    await expect(folders.check(join(root, 'file.txt'))).rejects.toThrow(
      `The working folder ${join(root, 'file.txt')} is not a folder; name a folder.`,
    );
  });

  it("refuses the root, the agent's home, a folder holding it and one in it outside the workspace", async () => {
    for (const path of ['/', home, root, join(home, 'cron'), '../skills']) {
      await expect(folders.check(path)).rejects.toThrow(/would let the job's commands write the agent's home/);
    }
  });

  it('reads the AGENTS.md of a folder, and none where there is none or it is empty', async () => {
    await writeFile(join(root, 'project', 'AGENTS.md'), 'Use pnpm.\n');
    expect(await folders.instructions(join(root, 'project'))).toBe('Use pnpm.\n');
    expect(await folders.instructions(join(home, 'workspace'))).toBeNull();
    await writeFile(join(home, 'workspace', 'AGENTS.md'), '  \n');
    expect(await folders.instructions(join(home, 'workspace'))).toBeNull();
  });
});
