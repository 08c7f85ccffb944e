import { constants, statSync, type Stats } from 'node:fs';
import { chmod, link, mkdir, open, readdir, readFile, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { SharedSyncs } from './sharedSyncs.js';
import { FileStoreError } from './FileStoreError.js';

/** Only the owner may enter the directories under `$AGENT_HOME`. */
export const PRIVATE_DIRECTORY_MODE = 0o700;
/** Only the owner may read the files under `$AGENT_HOME`: they hold prompts and chat ids. */
export const PRIVATE_FILE_MODE = 0o600;

/** The `code` of a Node system error (`ENOENT`, `EACCES`, …), or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** Why a path cannot be used, in words, for the messages users read. */
export function describeFileSystemProblem(code: string | undefined): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return 'this user lacks permission there';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
    case 'EDQUOT':
      return 'the disk is full';
    case 'ENOTDIR':
    case 'EEXIST':
      return 'part of the path is a file where a directory should be';
    case 'EISDIR':
      return 'a directory is in the way of the file';
    default:
      return 'the file system refused';
  }
}

/** Why a file system operation failed, in words and then the system's code: `the disk is full (ENOSPC)`. */
export function fileSystemReason(error: unknown): string {
  const code = errnoCode(error);
  return `${describeFileSystemProblem(code)} (${code ?? 'unknown error'})`;
}

/**
 * What a file store could not do and why, the start of the one sentence its error says:
 * `Cannot <action> <where>: <why> (<code>)`, such as "Cannot read the job store
 * /home/a/.agent/cron/jobs.json: this user lacks permission there (EACCES)". The store ends the
 * sentence with what to do about it, after a semicolon.
 */
export function fileStoreError(action: string, where: string, error: unknown): string {
  return `Cannot ${action} ${where}: ${fileSystemReason(error)}`;
}

/**
 * Creates `directory` and any missing parents with mode 0700. Only directories created here are
 * chmod-ed (mkdir's mode is filtered by the umask, chmod is not): an existing directory keeps the
 * modes its owner gave it, because an operator may have opened it up on purpose (a shared group,
 * a backup user) and silently tightening it would break their setup.
 */
export async function ensurePrivateDirectory(directory: string): Promise<void> {
  const target = resolve(directory);
  const firstCreated = await mkdir(target, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  if (firstCreated === undefined) return;
  const created: string[] = [];
  for (let current = target; ; current = dirname(current)) {
    created.push(current);
    if (current === resolve(firstCreated) || dirname(current) === current) break;
  }
  await Promise.all(created.map((path) => chmod(path, PRIVATE_DIRECTORY_MODE)));
}

/**
 * Whether `name` can be used as one path segment: not empty, not `.` or `..`, and free of path
 * separators and NUL, so that joining it to a directory can never leave that directory.
 */
export function isPlainPathSegment(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\\') && !name.includes('\0');
}

/** The names in `directory`; none when it does not exist (yet). */
export async function namesInDirectory(directory: string): Promise<string[]> {
  try {
    return await readdir(directory);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw error;
  }
}

/**
 * The text of `path`, or null when there is no such file (or a file stands where a directory
 * should, or a directory where the file should). Other failures are reported as
 * `CONTEXT.UNREADABLE` because the caller cannot tell them from a broken installation.
 */
export async function readTextIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return null;
    throw new FileStoreError(ERROR_CODES.CONTEXT.UNREADABLE, `${fileStoreError('read', path, error)}; fix its permissions or remove it.`, {
      cause: error,
    });
  }
}

/**
 * A change younger than this is not trusted to show in a `stat`: file times come from a coarse
 * clock, so two changes within one tick of it look alike (the "racy git" problem). Files changed
 * this recently are always read again.
 */
const RACY_CHANGE_MS = 1000;

export type StatResult = { ok: true; stats: Stats } | { ok: false; code: string | undefined };

/**
 * `stat` on the calling thread. For small files under `$AGENT_HOME` looked at before every run
 * it is the cheapest way by far: about a microsecond, no exception for a missing file, and no
 * hand-over to the thread pool, which on a loaded machine costs a context switch each time.
 */
export function statOf(path: string): StatResult {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats ? { ok: true, stats } : { ok: false, code: 'ENOENT' };
  } catch (error) {
    return { ok: false, code: errnoCode(error) };
  }
}

/**
 * A few named text files read before every run (the memory files), read again only when they
 * change: while nothing changes a read costs one `stat` per file. A file is re-read when its
 * inode, size, mtime or ctime differ, or when it changed less than a second ago. Results and
 * errors are those of `readTextIfPresent`, in the order of `paths`.
 */
export class ChangeAwareTextFiles {
  private readonly texts = new Map<string, { signature: string; text: string }>();

  /** `io` is for tests: the clock, and the stat and read calls, to count or to move in time. */
  constructor(
    private readonly paths: readonly string[],
    private readonly io = { now: Date.now, stat: statOf, read: readTextIfPresent },
  ) {}

  read(): Promise<Array<string | null>> {
    const startedAt = this.io.now();
    return Promise.all(this.paths.map((path) => this.readFile(path, startedAt)));
  }

  private async readFile(path: string, startedAt: number): Promise<string | null> {
    const file = this.io.stat(path);
    if (!file.ok && (file.code === 'ENOENT' || file.code === 'ENOTDIR')) {
      this.texts.delete(path);
      return null;
    }
    const signature = file.ok ? trustedSignature(file.stats, startedAt) : null;
    const cached = this.texts.get(path);
    if (signature !== null && cached?.signature === signature) return cached.text;
    const text = await this.io.read(path);
    if (text === null || signature === null) this.texts.delete(path);
    else this.texts.set(path, { signature, text });
    return text;
  }
}

/** What identifies this version of a file, or null when it changed too recently to tell. */
function trustedSignature(stats: Stats, now: number): string | null {
  if (now - Math.max(stats.mtimeMs, stats.ctimeMs) < RACY_CHANGE_MS) return null;
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

/** Makes temporary names unique among the writes of this process. */
let temporaryCounter = 0;

/**
 * A new name beside `path` for a temporary file that will replace it: hidden, ending in `.tmp`,
 * unique in this process, so that one left by a process killed mid-write is recognised.
 */
export function temporaryPathFor(path: string): string {
  temporaryCounter += 1;
  return join(dirname(path), `.${basename(path)}.${process.pid}.${temporaryCounter}.tmp`);
}

/** Whether `name` is one of the temporary files `writeFileDurably` leaves behind when it is killed mid-write. */
export function isDurableWriteTemporary(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}

/**
 * Removes the file at `path`; nothing when there is none. One unlink: `rm(path, { force: true })`
 * goes through Node's rimraf, an lstat on the event loop's side first, which a thousand runs
 * ending together feel.
 */
export async function removeFile(path: string): Promise<void> {
  await unlink(path).catch((error: unknown) => {
    if (errnoCode(error) !== 'ENOENT') throw error;
  });
}

/**
 * Writes `text` to `path` so that a crash or power cut at any instant leaves the old file or
 * the whole new one, never a torn one, and the new one is on disk when this resolves: a
 * temporary file beside it (created 0600, so the text is never readable by others, unlike a
 * chmod after the fact), synced, renamed over `path`, then the directory synced so the rename
 * itself survives: a claim written before a run, or a file whose existence is a promise made to
 * someone else (a 202 sent), is on disk before anyone is told.
 */
export async function writeFileDurably(path: string, text: string): Promise<void> {
  const handle = await replaceFileKeepingItOpen(path, text);
  try {
    await syncDirectory(dirname(path));
  } finally {
    await handle.close();
  }
}

/**
 * Creates `path` holding `text`, unless a file is there already: whether it created it. The
 * text is written to a private temporary file and synced, then linked to `path`, which the kernel
 * does atomically and never over an existing name: of several processes creating one path at
 * once exactly one succeeds, and a file under that name is always whole. The directory is synced
 * before it resolves true, so the new file survives a crash or power cut from then on.
 */
export async function createFileDurablyOnce(path: string, text: string): Promise<boolean> {
  const temporary = temporaryPathFor(path);
  let created: boolean;
  try {
    // Truncating: a temporary of this name can only be one left by a dead process of the same pid.
    const handle = await open(temporary, constants.O_CREAT | constants.O_TRUNC | constants.O_WRONLY, PRIVATE_FILE_MODE);
    try {
      await handle.writeFile(text);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    created = await link(temporary, path).then(
      () => true,
      (error: unknown) => {
        if (errnoCode(error) === 'EEXIST') return false;
        throw error;
      },
    );
  } finally {
    await removeFile(temporary);
  }
  if (created) await syncDirectory(dirname(path));
  return created;
}

/**
 * Writes `text` to `path` so that a crash of this process at any instant leaves the old file or
 * the whole new one (a temporary file beside it, created 0600, renamed over `path`), without
 * waiting for the disk: for records whose loss in a power cut costs nothing that another,
 * synced record does not cover.
 */
export async function writeFileAtomically(path: string, text: string): Promise<void> {
  const temporary = temporaryPathFor(path);
  try {
    await writeFile(temporary, text, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    await rename(temporary, path);
  } catch (error) {
    await removeFile(temporary).catch(() => undefined);
    throw error;
  }
}

/**
 * The first half of `writeFileDurably`: the new file is synced and renamed over `path`, and is
 * returned still open (for reading and writing), so that a caller appending to it afterwards
 * holds the very file now at `path`, opened with `extraFlags` besides (`O_DSYNC`, say). The
 * caller syncs the directory. `beforeRename` runs on the new file before it takes the name (a
 * lock taken there is held from the moment the file can be seen). On failure `path` is
 * untouched and the temporary file is gone.
 */
export async function replaceFileKeepingItOpen(
  path: string,
  text: string | Buffer,
  extraFlags = 0,
  beforeRename?: (handle: FileHandle) => Promise<void>,
): Promise<FileHandle> {
  const temporary = temporaryPathFor(path);
  let handle: FileHandle | undefined;
  try {
    handle = await open(temporary, constants.O_CREAT | constants.O_EXCL | constants.O_RDWR | extraFlags, PRIVATE_FILE_MODE);
    await handle.writeFile(text);
    await handle.datasync();
    await beforeRename?.(handle);
    await rename(temporary, path);
    return handle;
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await removeFile(temporary).catch(() => undefined);
    throw error;
  }
}

/**
 * Flushes a directory's entries (a rename, a new or removed file) to disk: resolves once a sync
 * that started after this call has finished, which callers waiting at the same moment share
 * (SharedSyncs). Systems that cannot open a directory for syncing (Windows) persist entries on
 * their own and are skipped.
 */
export function syncDirectory(directory: string): Promise<void> {
  return directorySyncs.sync(resolve(directory), () => syncDirectoryNow(directory));
}

/** Concurrent writers in one directory (runs answering at once) share its syncs. */
const directorySyncs = new SharedSyncs();

async function syncDirectoryNow(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch (error) {
    if (!['EISDIR', 'EPERM', 'EINVAL', 'EBADF', 'EACCES'].includes(errnoCode(error) ?? '')) throw error;
  } finally {
    await handle?.close();
  }
}

/** A file's text without the byte-order mark some editors save first; the mark is not damage. */
export function withoutByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
