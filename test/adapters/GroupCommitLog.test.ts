import { constants } from 'node:fs';
import { mkdtemp, open, readdir, readFile, readlink, rm, stat, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GroupCommitLog } from '../../src/adapters/persistence/GroupCommitLog.js';

describe('GroupCommitLog', () => {
  let directory: string;
  let path: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'agent-log-'));
    path = join(directory, 'journal.ndjson');
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  /** A log on `path` whose file handle is `wrap`ped, to make writes fail on purpose. */
  async function logWith(wrap: (handle: FileHandle) => FileHandle): Promise<GroupCommitLog> {
    const created = await GroupCommitLog.create(path, '');
    await created.close();
    const handle = await open(path, 'r+');
    return new GroupCommitLog(path, wrap(handle), 0);
  }

  it('creates the file 0600 with the given content and appends after it, in the order of the calls', async () => {
    const log = await GroupCommitLog.create(path, 'first\n');
    await Promise.all([log.append('second\n', true), log.append('third\n', false), log.append('fourth\n', true)]);
    await log.close();

    expect(await readFile(path, 'utf8')).toBe('first\nsecond\nthird\nfourth\n');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await readdir(directory)).sort()).toEqual(['journal.ndjson']);
  });

  it('writes the appends that arrive during a write together, as one batch, and says so before settling any', async () => {
    const log = await GroupCommitLog.create(path, '');
    const seen: string[] = [];
    const lines = Array.from({ length: 100 }, (_, n) => `line ${n}\n`);

    await Promise.all(
      lines.map((line, n) => log.append(line, true, () => seen.push(`written ${n}`)).then(() => seen.push(`settled ${n}`))),
    );
    await log.close();

    expect(await readFile(path, 'utf8')).toBe(lines.join(''));
    // The first append starts a write at once; the 99 made while it runs share the next one.
    const rest = Array.from({ length: 99 }, (_, n) => n + 1);
    expect(seen).toEqual(['written 0', 'settled 0', ...rest.map((n) => `written ${n}`), ...rest.map((n) => `settled ${n}`)]);
  });

  it('tells each append where its bytes lie in the file, multi-byte characters included, and reads them back from there', async () => {
    const log = await GroupCommitLog.create(path, 'first\n');
    const texts = ['ünïcode ✓\n', 'plain\n', '😀 emoji\n'];
    const places: Array<[number, number]> = [];
    await Promise.all(texts.map((text) => log.append(text, true, (position, length) => places.push([position, length]))));

    const readBack = await Promise.all(places.map(([position, length]) => log.file.read(position, length)));
    await log.close();

    expect(readBack.map((bytes) => bytes.toString('utf8'))).toEqual(texts);
    const file = await readFile(path);
    expect(places.map(([position, length]) => file.subarray(position, position + length).toString('utf8'))).toEqual(texts);
  });

  it('writes an append that is not durable with a durable one made in the same turn, else on its own', async () => {
    const log = await GroupCommitLog.create(path, '');
    const seen: string[] = [];
    const append = (name: string, durable: boolean) =>
      log.append(`${name}\n`, durable, () => seen.push(`written ${name}`)).then(() => seen.push(`settled ${name}`));

    await Promise.all([append('note 1', false), append('durable', true)]);
    await append('note 2', false);
    await log.close();

    expect(await readFile(path, 'utf8')).toBe('note 1\ndurable\nnote 2\n');
    // One batch for the first two: the note did not make the durable record wait for a write of its own.
    expect(seen).toEqual(['written note 1', 'written durable', 'settled note 1', 'settled durable', 'written note 2', 'settled note 2']);
  });

  it('rejects the appends of a batch that fails, cuts off what it wrote, and goes on after it', async () => {
    let failNext = false;
    const log = await logWith((handle) => {
      const write = handle.write.bind(handle) as (...args: unknown[]) => Promise<{ bytesWritten: number }>;
      return new Proxy(handle, {
        get: (target, property) =>
          property === 'write'
            ? async (bytes: Buffer, offset: number, length: number, position: number) => {
                if (!failNext) return write(bytes, offset, length, position);
                failNext = false;
                // Half of the batch reaches the file, then the disk is full.
                await write(bytes, offset, Math.floor(length / 2), position);
                throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
              }
            : Reflect.get(target, property, target),
      });
    });

    await log.append('kept 1\n', true);
    failNext = true;
    await expect(log.append('refused 1\nrefused 2\n', true)).rejects.toMatchObject({ code: 'ENOSPC' });
    await log.append('kept 2\n', true);
    await log.close();

    expect(await readFile(path, 'utf8')).toBe('kept 1\nkept 2\n');
  });

  it('rewrites the file with what the compaction plan writes, before the batch that asked, then appends after it', async () => {
    const plannedAt: number[] = [];
    const moves: Array<[number, number]> = [];
    let rewritten = false;
    const log = await GroupCommitLog.create(path, 'old 1\nold 2\nold 3\n', {
      compaction: (recordsBytes) => {
        plannedAt.push(recordsBytes);
        if (rewritten || recordsBytes <= 20) return null;
        rewritten = true;
        return {
          alongside: false,
          copy: async (into) => {
            expect(into.from).toBe(24);
            await into.write(Buffer.from('live\n'));
          },
          swapped: (from, shift) => moves.push([from, shift]),
        };
      },
    });

    await log.append('new 1\n', true);
    await log.append('new 2\n', true);
    await log.close();

    expect(plannedAt).toEqual([18, 24]);
    expect(moves).toEqual([[24, 5 - 24]]);
    expect(await readFile(path, 'utf8')).toBe('live\nnew 2\n');
    expect((await readdir(directory)).sort()).toEqual(['journal.ndjson']);
  });

  it('rewrites alongside the appends: the records appended while the content was copied follow it, at the place it says', async () => {
    let releaseCopy: () => void = () => undefined;
    const copyMayEnd = new Promise<void>((resolve) => (releaseCopy = resolve));
    let swappedWith: [number, number] | null = null;
    let noteSwapped: () => void = () => undefined;
    const swapped = new Promise<void>((resolve) => (noteSwapped = resolve));
    let planned = false;
    const log = await GroupCommitLog.create(path, 'dead 1\nlive 1\ndead 2\n', {
      reserveBytes: 16,
      compaction: () => {
        if (planned) return null;
        planned = true;
        return {
          alongside: true,
          copy: async (into) => {
            // What the old file holds before `from` is still there to copy from while appends go on.
            expect((await log.file.read(7, 7)).toString('utf8')).toBe('live 1\n');
            await into.write(Buffer.from('live 1\n'));
            await copyMayEnd;
          },
          swapped: (from, shift) => {
            swappedWith = [from, shift];
            noteSwapped();
          },
        };
      },
    });
    const places: Array<[number, number]> = [];
    const appendNoting = (text: string) => log.append(text, true, (position, length) => places.push([position, length]));

    await appendNoting('during 1\n');
    await appendNoting('during 2\n');
    expect(swappedWith).toBeNull();
    releaseCopy();
    // The swap needs no append to happen: the log finishes the rewrite as soon as the copy ends.
    await swapped;
    await appendNoting('after\n');
    await log.close();

    // `from` was where 'during 1' went; the records from there on moved by `shift`.
    expect(swappedWith).toEqual([21, 7 - 21]);
    const content = await readFile(path, 'utf8');
    expect(content.replace(/\n+$/, '\n')).toBe('live 1\nduring 1\nduring 2\nafter\n');
    const [during1, during2, after] = places;
    expect(during1![0] + swappedWith![1]).toBe(7);
    expect(during2![0] + swappedWith![1]).toBe(16);
    expect(content.slice(after![0], after![0] + after![1])).toBe('after\n');
    expect((await readdir(directory)).sort()).toEqual(['journal.ndjson']);
  });

  it('gives up a rewrite whose copying fails and goes on appending to the old file', async () => {
    let planned = false;
    const log = await GroupCommitLog.create(path, 'old\n', {
      compaction: () => {
        if (planned) return null;
        planned = true;
        return {
          alongside: false,
          copy: async () => {
            throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
          },
          swapped: () => {
            throw new Error('not swapped');
          },
        };
      },
    });

    await log.append('new\n', true);
    await log.close();

    expect(await readFile(path, 'utf8')).toBe('old\nnew\n');
    expect((await readdir(directory)).sort()).toEqual(['journal.ndjson']);
  });

  // Skipped off Linux: /proc tells a descriptor's open flags, and elsewhere there is nothing to look at.
  (process.platform === 'linux' ? it : it.skip)('opens the file O_DSYNC, so that a batch is synced by its one write', async () => {
    const log = await GroupCommitLog.create(path, '');
    try {
      const descriptors = await readdir('/proc/self/fd');
      const targets = await Promise.all(descriptors.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
      const fd = descriptors[targets.indexOf(path)];
      const flags = /^flags:\s+([0-7]+)$/m.exec(await readFile(`/proc/self/fdinfo/${fd}`, 'utf8'))![1]!;
      expect(parseInt(flags, 8) & constants.O_DSYNC).toBe(constants.O_DSYNC);
    } finally {
      await log.close();
    }
  });

  it('refuses appends once closed', async () => {
    const log = await GroupCommitLog.create(path, '');
    await log.close();
    await expect(log.append('late\n', true)).rejects.toThrow(/closed/);
  });
});
