import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import type { RunOutputStore, StoredRunReport } from '../../application/ports/RunOutputStore.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { FileStoreError, InvalidReportNameError } from './FileStoreError.js';
import { PRIVATE_FILE_MODE, fileStoreError, ensurePrivateDirectory, errnoCode, isPlainPathSegment, removeFile } from './fileSystem.js';

/** Reports of one job started within the same second that get names of their own. */
const MAX_SAME_NAME = 100;

/**
 * Run reports in `$AGENT_HOME/cron/output/<jobId>/<fileName>`: directories 0700,
 * files 0600. File names are timestamps that sort in time order, so "newest" is "last by name".
 */
@injectable()
export class FileRunOutputStore implements RunOutputStore {
  constructor(@inject(TOKENS.AgentPaths) private readonly paths: AgentPaths) {}

  /**
   * Writes the report, then deletes the job's oldest reports until `keep` remain. A report of
   * the same name (two runs started within one second) is kept: the new one is written as
   * `<name>_2.md`, `_3` …, which sorts after it. The report just written always survives, even
   * if a clock set back made its name sort before older ones, so the returned path always
   * exists; `keep` below 1 counts as 1. Throws InvalidInputError for a job id or file name that
   * could leave the directory.
   */
  async save(jobId: string, fileName: string, content: string, keep: number): Promise<string> {
    const directory = this.directoryOf(jobId);
    this.plainName(fileName);
    try {
      await ensurePrivateDirectory(directory);
      const written = await this.writeNew(directory, fileName, content);
      await this.pruneOlderThanNewest(directory, written, Math.max(1, Math.floor(keep)));
      return join(directory, written);
    } catch (error) {
      throw this.unavailable(directory, error);
    }
  }

  /** Creates the report under `fileName`, or the first free `<base>_<n>.md`; returns the name used. */
  private async writeNew(directory: string, fileName: string, content: string): Promise<string> {
    const base = fileName.endsWith('.md') ? fileName.slice(0, -3) : fileName;
    for (let attempt = 1; ; attempt += 1) {
      const name = attempt === 1 ? fileName : `${base}_${attempt}.md`;
      try {
        await writeFile(join(directory, name), content, { encoding: 'utf8', mode: PRIVATE_FILE_MODE, flag: 'wx' });
        return name;
      } catch (error) {
        if (errnoCode(error) !== 'EEXIST' || attempt >= MAX_SAME_NAME) throw error;
      }
    }
  }

  /** Deletes the job's report directory and everything in it; nothing happens when it is absent. */
  async removeAll(jobId: string): Promise<void> {
    const directory = this.directoryOf(jobId);
    try {
      await rm(directory, { recursive: true, force: true });
    } catch (error) {
      throw this.unavailable(directory, error);
    }
  }

  /**
   * The job's report names, newest first; empty when its directory is absent. Temporary and
   * hidden files are not reports. Throws OUTPUT.UNREADABLE when the directory cannot be read.
   */
  async list(jobId: string): Promise<string[]> {
    const directory = this.directoryOf(jobId);
    try {
      const entries = await readdir(directory, { withFileTypes: true });
      return entries
        .filter((entry) => entry.isFile() && entry.name.endsWith('.md') && !entry.name.startsWith('.'))
        .map((entry) => entry.name)
        .sort()
        .reverse();
    } catch (error) {
      if (['ENOENT', 'ENOTDIR'].includes(errnoCode(error) ?? '')) return [];
      throw this.unreadable(directory, error);
    }
  }

  /** The report's text, or null when it is gone. Throws OUTPUT.UNREADABLE when it cannot be read. */
  async read(jobId: string, fileName: string): Promise<StoredRunReport | null> {
    const directory = this.directoryOf(jobId);
    const path = join(directory, this.plainName(fileName));
    try {
      return { fileName, location: path, content: await readFile(path, 'utf8') };
    } catch (error) {
      if (['ENOENT', 'ENOTDIR', 'EISDIR'].includes(errnoCode(error) ?? '')) return null;
      throw this.unreadable(path, error);
    }
  }

  private plainName(fileName: string): string {
    if (!isPlainPathSegment(fileName)) {
      throw new InvalidReportNameError(`The report name "${fileName}" is not a plain file name.`);
    }
    return fileName;
  }

  private directoryOf(jobId: string): string {
    if (!isPlainPathSegment(jobId)) {
      throw new InvalidReportNameError(`The job id "${jobId}" is not a plain file name.`);
    }
    return join(this.paths.outputDir, jobId);
  }

  private async pruneOlderThanNewest(directory: string, justWritten: string, keep: number): Promise<void> {
    const entries = await readdir(directory, { withFileTypes: true });
    const others = entries
      .filter((entry) => entry.isFile() && entry.name !== justWritten)
      .map((entry) => entry.name)
      .sort();
    const surplus = others.slice(0, Math.max(0, others.length - (keep - 1)));
    await Promise.all(surplus.map((name) => removeFile(join(directory, name))));
  }

  private unreadable(path: string, error: unknown): FileStoreError {
    return new FileStoreError(
      ERROR_CODES.OUTPUT.UNREADABLE,
      `${fileStoreError('read', `run reports in ${path}`, error)}; give this user read access to it.`,
      { cause: error },
    );
  }

  private unavailable(directory: string, error: unknown): FileStoreError {
    return new FileStoreError(
      ERROR_CODES.OUTPUT.UNAVAILABLE,
      `${fileStoreError('write', `run reports in ${directory}`, error)}; make it a directory this user can write to.`,
      { cause: error },
    );
  }
}
