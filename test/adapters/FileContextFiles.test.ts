import 'reflect-metadata';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { FileMemoryStore } from '../../src/adapters/persistence/FileMemoryStore.js';
import { ChangeAwareTextFiles, readTextIfPresent, statOf } from '../../src/adapters/persistence/fileSystem.js';
import { FileSkillLibrary } from '../../src/adapters/persistence/FileSkillLibrary.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import type { AgentPaths } from '../../src/application/ports/Settings.js';

let home: string;
let paths: AgentPaths;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'agent-context-'));
  paths = agentPathsFor(home);
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function put(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
}

describe('FileMemoryStore', () => {
  const memory = () => join(paths.memoriesDir, 'MEMORY.md');
  const user = () => join(paths.memoriesDir, 'USER.md');

  it('gives MEMORY.md then USER.md, named by file name, as written', async () => {
    await put(user(), 'Prefers short answers.\n');
    await put(memory(), '# Memory\nThe server is called atlas.\n');

    expect(await new FileMemoryStore(paths).load()).toEqual([
      { name: 'MEMORY.md', content: '# Memory\nThe server is called atlas.\n' },
      { name: 'USER.md', content: 'Prefers short answers.\n' },
    ]);
  });

  it('leaves out a missing file and a file holding only white space', async () => {
    await put(memory(), ' \n\t\n');
    await put(user(), 'Lives in Lisbon.');

    expect(await new FileMemoryStore(paths).load()).toEqual([{ name: 'USER.md', content: 'Lives in Lisbon.' }]);
  });

  it('gives nothing when the memories directory does not exist', async () => {
    expect(await new FileMemoryStore(paths).load()).toEqual([]);
  });

  it('gives each load the files as they are then: edited, created, emptied, removed', async () => {
    const store = new FileMemoryStore(paths);
    await put(memory(), 'v1');
    expect(await store.load()).toEqual([{ name: 'MEMORY.md', content: 'v1' }]);

    // Same size, so only the change time tells the two apart.
    await put(memory(), 'v2');
    await put(user(), 'new');
    expect(await store.load()).toEqual([
      { name: 'MEMORY.md', content: 'v2' },
      { name: 'USER.md', content: 'new' },
    ]);

    await put(memory(), '');
    await rm(user());
    expect(await store.load()).toEqual([]);
  });

  it('leaves out a directory standing where a memory file should be', async () => {
    await put(memory(), 'kept');
    await mkdir(join(paths.memoriesDir, 'USER.md', 'x'), { recursive: true });
    expect(await new FileMemoryStore(paths).load()).toEqual([{ name: 'MEMORY.md', content: 'kept' }]);
  });
});

describe('ChangeAwareTextFiles', () => {
  const fileA = () => join(paths.memoriesDir, 'A.md');
  const fileB = () => join(paths.memoriesDir, 'B.md');

  /** A.md and B.md, read with a clock `ahead` ms in the future; every stat and read is counted. */
  function watched(ahead: number) {
    const calls: string[] = [];
    const files = new ChangeAwareTextFiles([fileA(), fileB()], {
      now: () => Date.now() + ahead,
      stat: (path: string) => {
        calls.push(`stat ${relative(home, path)}`);
        return statOf(path);
      },
      read: (path: string) => {
        calls.push(`read ${relative(home, path)}`);
        return readTextIfPresent(path);
      },
    });
    return { files, calls };
  }
  /** Gives `path` distinct, old times, as a change made long ago would have. */
  const age = (path: string, secondsAgo: number) =>
    utimes(path, new Date(Date.now() - secondsAgo * 1000), new Date(Date.now() - secondsAgo * 1000));

  it('once things have settled, only stats the files, and reads nothing again', async () => {
    await put(fileA(), 'alpha');
    const { files, calls } = watched(5_000);

    expect(await files.read()).toEqual(['alpha', null]);
    calls.length = 0;
    expect(await files.read()).toEqual(['alpha', null]);

    expect(calls).toEqual(['stat memories/A.md', 'stat memories/B.md']);
  });

  it('reads again a file whose times changed, and finds a file created since', async () => {
    await put(fileA(), 'one');
    await age(fileA(), 60);
    const { files } = watched(5_000);
    expect(await files.read()).toEqual(['one', null]);

    await put(fileA(), 'two');
    await put(fileB(), 'beta');
    await age(fileA(), 30);

    expect(await files.read()).toEqual(['two', 'beta']);
  });

  it('does not trust a stat of a file changed less than a second ago: it reads it every time', async () => {
    await put(fileA(), 'fresh');
    const { files, calls } = watched(0);

    await files.read();
    await files.read();

    expect(calls.filter((call) => call === 'read memories/A.md')).toHaveLength(2);
  });
});

describe('FileSkillLibrary', () => {
  const skillFile = (...segments: string[]) => join(paths.skillsDir, ...segments, 'SKILL.md');

  it('finds skills/<name>/SKILL.md', async () => {
    await put(skillFile('weather'), 'Use the weather API.');
    expect(await new FileSkillLibrary(paths).find('weather')).toBe('Use the weather API.');
  });

  it('finds skills/<category>/<name>/SKILL.md one level deeper', async () => {
    await put(skillFile('research', 'arxiv'), 'Search arXiv first.');
    expect(await new FileSkillLibrary(paths).find('arxiv')).toBe('Search arXiv first.');
  });

  it('prefers the skill directly under skills/ to one in a category', async () => {
    await put(skillFile('aaa', 'weather'), 'in a category');
    await put(skillFile('weather'), 'direct');
    expect(await new FileSkillLibrary(paths).find('weather')).toBe('direct');
  });

  it('takes the first category in name order when several have the skill', async () => {
    await put(skillFile('zeta', 'notes'), 'from zeta');
    await put(skillFile('alpha', 'notes'), 'from alpha');
    expect(await new FileSkillLibrary(paths).find('notes')).toBe('from alpha');
  });

  it('does not look two category levels deep', async () => {
    await put(skillFile('a', 'b', 'deep'), 'too deep');
    expect(await new FileSkillLibrary(paths).find('deep')).toBeNull();
  });

  it('gives null for an unknown skill, also when there is no skills directory', async () => {
    const library = new FileSkillLibrary(paths);
    expect(await library.find('missing')).toBeNull();
    await put(skillFile('weather'), 'x');
    await writeFile(join(paths.skillsDir, 'README.md'), 'not a category');
    expect(await library.find('missing')).toBeNull();
  });

  it.each(['../memories', '..', '.', 'research/arxiv', 'a\\b', ''])(
    'gives null for the name %j, which could leave the skills directory',
    async (name) => {
      await put(skillFile('research', 'arxiv'), 'nested');
      await put(join(paths.memoriesDir, 'SKILL.md'), 'outside the skills directory');
      await put(join(paths.skillsDir, 'SKILL.md'), 'the skills directory itself');
      expect(await new FileSkillLibrary(paths).find(name)).toBeNull();
    },
  );
});
