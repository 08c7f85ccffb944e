import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { USED_FIRE_TOKEN_ID, UsedFireTokensUnavailableError, type UsedFireTokens } from '../../application/ports/UsedFireTokens.js';
import { acquireFileLock, runInTurn } from './fileLock.js';
import {
  createFileDurablyOnce,
  fileSystemReason,
  ensurePrivateDirectory,
  errnoCode,
  isDurableWriteTemporary,
  namesInDirectory,
  statOf,
  syncDirectory,
} from './fileSystem.js';

/** A temporary file older than this was left by a process killed while remembering an id. */
const ABANDONED_TEMPORARY_MS = 60 * 60_000;

/**
 * The used fire tokens as one small file per id under `$AGENT_HOME/cron/fire_tokens/`, named by
 * the id and holding the instant it is remembered until. A file is made with
 * `createFileDurablyOnce` (written whole, synced, then linked to its name, which never replaces
 * an existing file): so of the processes on this machine remembering one id at once exactly one
 * succeeds, without a lock, and a file under an id's name is always complete; and it is on disk
 * before `remember` resolves, so a kill -9 or a power cut right after a fire was answered still
 * remembers its token.
 *
 * Removing a file — an id remembered until a time passed, forgotten, or pruned — is done under
 * the kernel lock `fire_tokens/.lock` (fileLock.ts), so that a file just made by another process
 * is never taken for the expired one it replaces.
 */
@injectable()
export class FileUsedFireTokens implements UsedFireTokens {
  private readonly directory: string;
  private readonly lockPath: string;
  private ready: Promise<void> | null = null;

  constructor(@inject(TOKENS.AgentPaths) paths: AgentPaths) {
    this.directory = join(paths.cronDir, 'fire_tokens');
    this.lockPath = join(this.directory, '.lock');
  }

  async remember(id: string, until: Date, now: Date): Promise<boolean> {
    const path = this.pathOf(id);
    return this.translated(async () => {
      await this.ensureDirectory();
      if (await this.create(path, until)) return true;
      const held = await this.untilOf(path);
      if (held !== 'absent' && held !== null && held > now.getTime()) return false;
      return this.locked(async () => {
        const current = await this.untilOf(path);
        if (current !== 'absent' && current !== null && current > now.getTime()) return false;
        if (current !== 'absent') await unlinkIfPresent(path);
        return this.create(path, until);
      });
    });
  }

  async forget(id: string): Promise<void> {
    const path = this.pathOf(id);
    await this.translated(() =>
      this.locked(async () => {
        // Synced: a token forgotten so that the portal may send it again is still forgotten after a crash.
        if (await unlinkIfPresent(path)) await syncDirectory(this.directory);
      }),
    );
  }

  async forgetExpired(before: Date): Promise<void> {
    await this.translated(() =>
      this.locked(async () => {
        for (const name of await namesInDirectory(this.directory)) {
          const path = join(this.directory, name);
          if (isDurableWriteTemporary(name)) {
            const stat = statOf(path);
            if (stat.ok && before.getTime() - stat.stats.mtimeMs > ABANDONED_TEMPORARY_MS) await unlinkIfPresent(path);
          } else if (USED_FIRE_TOKEN_ID.test(name)) {
            const until = await this.untilOf(path);
            if (until === null || (until !== 'absent' && until <= before.getTime())) await unlinkIfPresent(path);
          }
        }
      }),
    );
  }

  private pathOf(id: string): string {
    if (!USED_FIRE_TOKEN_ID.test(id))
      throw new RangeError(`a used fire token id must be 1 to 128 letters, digits, - or _, not ${JSON.stringify(id.slice(0, 40))}`);
    return join(this.directory, id);
  }

  /** Makes the file of `path` holding `until`, unless one is there: whether it made it. */
  private create(path: string, until: Date): Promise<boolean> {
    return createFileDurablyOnce(path, `${until.toISOString()}\n`);
  }

  /** Until when the file at `path` remembers its id (ms); 'absent' without one; null when it cannot be read as a time. */
  private async untilOf(path: string): Promise<number | 'absent' | null> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return 'absent';
      throw error;
    }
    const until = Date.parse(text.trim());
    return Number.isNaN(until) ? null : until;
  }

  private ensureDirectory(): Promise<void> {
    this.ready ??= ensurePrivateDirectory(this.directory).catch((error: unknown) => {
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  /** Runs `work` holding the directory's lock, after the other holders in this process. */
  private locked<T>(work: () => Promise<T>): Promise<T> {
    return runInTurn(this.lockPath, async () => {
      await this.ensureDirectory();
      const held = await acquireFileLock(this.lockPath);
      try {
        return await work();
      } finally {
        await held.release();
      }
    });
  }

  /** A failure of the file system as the port's error, naming the directory and what to do. */
  private async translated<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof RangeError) throw error;
      const problem = errnoCode(error) === undefined ? (error instanceof Error ? error.message : String(error)) : fileSystemReason(error);
      throw new UsedFireTokensUnavailableError(
        `Cannot remember the fire tokens used in ${this.directory}: ${problem}; make it a directory this user can write to, or set AGENT_HOME to one.`,
        { cause: error },
      );
    }
  }
}

/** Removes `path`; whether it was there. */
async function unlinkIfPresent(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
}
