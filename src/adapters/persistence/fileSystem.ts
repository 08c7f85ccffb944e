import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { AppError } from '../../domain/errors.js';

/** Only the owner may enter the directories under `$AGENT_HOME` (decisions §2). */
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
  return (
    name !== '' &&
    name !== '.' &&
    name !== '..' &&
    !name.includes('/') &&
    !name.includes('\\') &&
    !name.includes('\0')
  );
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
    throw new AppError(
      'CONTEXT.UNREADABLE',
      `Cannot read ${path}: ${describeFileSystemProblem(code)} (${code ?? 'unknown error'}); fix its permissions or remove it.`,
      { cause: error },
    );
  }
}

/** Makes temporary names unique among the writes of this process. */
let temporaryCounter = 0;

/** Whether `name` is one of the temporary files `writeFileDurably` leaves behind when it is killed mid-write. */
export function isDurableWriteTemporary(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}

/**
 * Writes `text` to `path` so that a crash or power cut at any instant leaves the old file or
 * the whole new one, never a torn one, and the new one is on disk when this resolves: a
 * temporary file beside it (created 0600, so the text is never readable by others, unlike a
 * chmod after the fact), synced, renamed over `path`, then the directory synced so the rename
 * itself survives. steno's Writer renames but syncs nothing, which is enough for the job store
 * but not for a file whose existence is a promise made to someone else (a 202 sent).
 */
export async function writeFileDurably(
  path: string,
  text: string,
  syncParent: (directory: string) => Promise<void> = syncDirectory,
): Promise<void> {
  temporaryCounter += 1;
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${temporaryCounter}.tmp`);
  try {
    const handle = await open(temporary, 'wx', PRIVATE_FILE_MODE);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncParent(dirname(path));
}

/**
 * Directory syncs shared between concurrent callers: a caller waits for a sync that started
 * after its call, so its own change is covered, but any number of callers arriving during one
 * sync share the next. Under load this turns one fsync per change into one per batch.
 */
export class CoalescingDirectorySync {
  private readonly states = new Map<string, { running: Promise<void> | null; next: Promise<void> | null }>();

  constructor(private readonly sync: (directory: string) => Promise<void> = syncDirectory) {}

  request(directory: string): Promise<void> {
    let state = this.states.get(directory);
    if (!state) {
      state = { running: null, next: null };
      this.states.set(directory, state);
    }
    const current = state;
    if (!current.running) return this.start(directory, current);
    current.next ??= current.running.catch(() => undefined).then(() => {
      current.next = null;
      return this.start(directory, current);
    });
    return current.next;
  }

  private start(directory: string, state: { running: Promise<void> | null }): Promise<void> {
    const running = this.sync(directory).finally(() => {
      if (state.running === running) state.running = null;
    });
    state.running = running;
    return running;
  }
}

/**
 * Flushes a directory's entries (a rename, a new or removed file) to disk. Systems that cannot
 * open a directory for syncing (Windows) persist entries on their own and are skipped.
 */
export async function syncDirectory(directory: string): Promise<void> {
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
