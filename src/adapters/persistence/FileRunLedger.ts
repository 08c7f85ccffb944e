import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable, optional } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError, InvalidInputError } from '../../domain/errors.js';
import {
  interruptedRun,
  isTooOld,
  newestFirst,
  oldestKept,
  RUN_KINDS,
  sameClaim,
  type RunClaim,
  type RunKind,
  type RunRecord,
  type RunRetention,
} from '../../domain/runs/RunRecord.js';
import type { Clock } from '../../application/ports/Clock.js';
import type { RunLedger, RunPage, RunQuery, RunSearch, SpendQuery, TranscriptOwner } from '../../application/ports/RunLedger.js';
import { searchRunFiles } from './fileRunSearch.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';
import { totalsOf, type RunTotals } from '../../domain/runs/runTotals.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { AgentConfig } from '../config/AgentConfig.js';
import { runRetention } from '../config/runSettings.js';
import { CONFIG_TOKENS } from '../config/tokens.js';
import { FileStoreError } from './FileStoreError.js';
import { acquireFileLock, LockWaitExpired, runInTurn, type HeldLock } from './fileLock.js';
import { readTranscript, removeTranscripts, writeTranscript } from './FileRunTranscripts.js';
import { fileNameOf, idOfName, startOfName } from './runFileNames.js';
import { RecordDirectories } from './RecordDirectories.js';
import {
  fileStoreError,
  fileSystemReason,
  ensurePrivateDirectory,
  errnoCode,
  isPlainPathSegment,
  removeFile,
  writeFileAtomically,
  writeFileDurably,
} from './fileSystem.js';

/** The directory of the marks of runs saved `running`; its name is no job's or route's, nor a kind. */
const RUNNING_MARKS = '.running';

/**
 * The run ledger in files (docs/runs.md): `$AGENT_HOME/runs/<kind>/<job id or route>/` holds
 * one JSON file per run, named after its start and id; directories 0700, files 0600. Every
 * write replaces the whole file atomically (a temporary file renamed over it) without waiting
 * for the disk. Each job or route keeps its newest `runs.retention_count` runs (200) and none
 * older than `runs.retention_days` (30): the surplus is removed every few saves (RecordDirectories), and
 * reading takes only what the retention keeps, so the rules hold whichever process wrote what.
 *
 * A run saved with `delivery_pending` is written durably (synced, and its directory), after a
 * marker naming it, `runs/.pending/<kind>/<id>.json`, also synced: `pendingDeliveries` reads the
 * markers instead of every record. The run's next save without `delivery_pending` removes it; a
 * marker whose run has ended without it (a crash between two writes) is passed over and removed.
 */
@injectable()
export class FileRunLedger implements RunLedger {
  private readonly retention: RunRetention;
  private readonly directories = new RecordDirectories(idOfName);

  constructor(
    @inject(TOKENS.AgentPaths) private readonly paths: AgentPaths,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(CONFIG_TOKENS.AgentConfig) @optional() config: AgentConfig | null = null,
  ) {
    this.retention = runRetention(config);
  }

  async save(run: RunRecord): Promise<void> {
    const directory = this.directoryOf(run.kind, run.subject);
    if (!isPlainPathSegment(run.id))
      throw new InvalidInputError(ERROR_CODES.RUNS.INVALID_NAME, `The run id "${run.id}" cannot name a file.`);
    const pending = run.delivery_pending === true;
    try {
      const known = await this.directories.known(directory);
      const name = known.byId.get(run.id) ?? fileNameOf(run);
      const text = `${JSON.stringify(run, null, 2)}\n`;
      // The running mark comes before the record and goes after it: a crash between the two leaves
      // a mark of a run that ended (passed over), never a running run without one. An answer
      // waiting for its delivery is not running in that sense (the gateway's start delivers it).
      if (run.status === 'running' && !pending) await this.markRunning(run);
      if (pending) {
        await this.writeDurably(this.markerDirectory(run.kind), `${run.id}.json`, `${JSON.stringify({ subject: run.subject, name })}\n`);
        await this.writeDurably(directory, name, text);
      } else {
        await writeFileAtomically(join(directory, name), text).catch(async (error: unknown) => {
          if (errnoCode(error) !== 'ENOENT') throw error;
          await ensurePrivateDirectory(directory);
          await writeFileAtomically(join(directory, name), text);
        });
        await removeFile(join(this.markerDirectory(run.kind), `${run.id}.json`));
      }
      if (run.status !== 'running' || pending) await this.unmarkRunning(run.id);
      const oldest = this.oldestKept();
      const removed = await this.directories.added(directory, name, this.retention.count, (each) => startOfName(each) < oldest);
      await removeTranscripts(directory, removed); // A run's transcript goes with its record (FileRunTranscripts).
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new FileStoreError(
        ERROR_CODES.RUNS.UNAVAILABLE,
        `${fileStoreError('write', `the run ledger in ${directory}`, error)}; make it a directory this user can write to.`,
        { cause: error },
      );
    }
  }

  async saveTranscript(run: TranscriptOwner, transcript: RunTranscript): Promise<void> {
    await writeTranscript(this.directoryOf(run.kind, run.subject), run.id, transcript);
  }

  async transcriptOf(id: string): Promise<RunTranscript | null> {
    const found = await this.locate(id);
    return found === null ? null : readTranscript(found.directory, id);
  }

  /** Writes `name` in `directory` (made when missing) synced, its directory too. */
  private async writeDurably(directory: string, name: string, text: string): Promise<void> {
    await writeFileDurably(join(directory, name), text).catch(async (error: unknown) => {
      if (errnoCode(error) !== 'ENOENT') throw error;
      await ensurePrivateDirectory(directory);
      await writeFileDurably(join(directory, name), text);
    });
  }

  private markerDirectory(kind: RunKind): string {
    return join(this.paths.runsDir, '.pending', kind);
  }

  async pendingDeliveries(kind: RunKind): Promise<RunRecord[]> {
    const markers = this.markerDirectory(kind);
    let names: string[];
    try {
      names = (await readdir(markers)).filter((name) => name.endsWith('.json') && !name.startsWith('.'));
    } catch (error) {
      if (['ENOENT', 'ENOTDIR'].includes(errnoCode(error) ?? '')) return [];
      throw this.unreadable(markers, error);
    }
    const runs: RunRecord[] = [];
    for (const marker of names) {
      let place: { subject?: unknown; name?: unknown };
      try {
        place = JSON.parse(await readFile(join(markers, marker), 'utf8')) as typeof place;
      } catch {
        continue;
      }
      if (
        typeof place.subject !== 'string' ||
        typeof place.name !== 'string' ||
        !isPlainPathSegment(place.subject) ||
        !isPlainPathSegment(place.name)
      )
        continue;
      const run = await this.read(join(this.directoryOf(kind, place.subject), place.name));
      if (run !== null && run.delivery_pending === true) runs.push(run);
      // Its run has ended since (a marker a crash left behind): gone for good. A run still going
      // on may be between its marker and its pending save, and keeps its marker.
      else if (run === null || run.finished_at !== null) await removeFile(join(markers, marker)).catch(() => undefined);
    }
    return runs.sort(newestFirst).reverse();
  }

  async get(id: string): Promise<RunRecord | null> {
    const found = await this.locate(id);
    return found === null ? null : this.read(join(found.directory, found.name));
  }

  /**
   * The claim is taken under the kernel lock `.redelivery.lock` of the run's directory (not a
   * record's name, so never listed nor pruned): the run is read again, compared and written
   * within it.
   */
  async claimForRedelivery(id: string, claim: RunClaim, abandoned: RunClaim | null): Promise<RunRecord | null> {
    const found = await this.locate(id);
    if (found === null) return null;
    const path = join(found.directory, found.name);
    return runInTurn(path, async () => {
      const lockPath = join(found.directory, '.redelivery.lock');
      let lock: HeldLock;
      try {
        lock = await acquireFileLock(lockPath);
      } catch (error) {
        const detail = error instanceof LockWaitExpired ? error.message : fileSystemReason(error);
        throw new FileStoreError(
          ERROR_CODES.RUNS.UNAVAILABLE,
          `Cannot claim run ${id} in the run ledger: ${detail}; make ${found.directory} a directory this user can write to.`,
          { cause: error },
        );
      }
      try {
        const run = await this.read(path);
        if (run === null || !sameClaim(run.redelivery_claim, abandoned)) return null;
        const claimed: RunRecord = { ...run, redelivery_claim: claim };
        await writeFileAtomically(path, `${JSON.stringify(claimed, null, 2)}\n`).catch((error: unknown) => {
          throw new FileStoreError(
            ERROR_CODES.RUNS.UNAVAILABLE,
            `${fileStoreError('write', `the run ledger in ${found.directory}`, error)}; make it a directory this user can write to.`,
            { cause: error },
          );
        });
        return claimed;
      } finally {
        await lock.release();
      }
    });
  }

  async running(limit: number): Promise<RunRecord[]> {
    const runs: RunRecord[] = [];
    for (const id of await this.markedRunning()) {
      const found = await this.locateMarked(id);
      const run = found === null ? null : await this.read(join(found.directory, found.name));
      if (run !== null && run.status === 'running' && run.delivery_pending !== true) runs.push(run);
    }
    return runs.sort((a, b) => newestFirst(b, a)).slice(0, Math.max(0, limit));
  }

  /** Read again, compared and written in this process's turn for the run's file (as a redelivery claim is). */
  async settleInterrupted(id: string, why: string, at: Date): Promise<RunRecord | null> {
    const found = (await this.locateMarked(id)) ?? (await this.locate(id));
    if (found === null) return null;
    const path = join(found.directory, found.name);
    return runInTurn(path, async () => {
      const run = await this.read(path);
      if (run === null || run.status !== 'running' || run.delivery_pending === true) return null;
      const settled = interruptedRun(run, why, at);
      await writeFileAtomically(path, `${JSON.stringify(settled, null, 2)}\n`).catch((error: unknown) => {
        throw new FileStoreError(
          ERROR_CODES.RUNS.UNAVAILABLE,
          `${fileStoreError('write', `the run ledger in ${found.directory}`, error)}; make it a directory this user can write to.`,
          { cause: error },
        );
      });
      await this.unmarkRunning(id);
      return settled;
    });
  }

  /**
   * `runs/.running/<id>` marks a run saved `running` (it holds the run's kind and job or route),
   * so that finding the runs still going reads a directory that is empty most of the time
   * instead of every record.
   */
  private get runningDirectory(): string {
    return join(this.paths.runsDir, RUNNING_MARKS);
  }

  private async markRunning(run: RunRecord): Promise<void> {
    const text = `${JSON.stringify({ kind: run.kind, subject: run.subject })}\n`;
    const path = join(this.runningDirectory, run.id);
    await writeFileAtomically(path, text).catch(async (error: unknown) => {
      if (errnoCode(error) !== 'ENOENT') throw error;
      await ensurePrivateDirectory(this.runningDirectory);
      await writeFileAtomically(path, text);
    });
  }

  private async unmarkRunning(id: string): Promise<void> {
    await removeFile(join(this.runningDirectory, id));
  }

  /** The ids marked running; none when nothing ever ran. */
  private async markedRunning(): Promise<string[]> {
    try {
      return (await readdir(this.runningDirectory)).filter(
        (name) => isPlainPathSegment(name) && !(name.startsWith('.') && name.endsWith('.tmp')),
      );
    } catch (error) {
      if (['ENOENT', 'ENOTDIR'].includes(errnoCode(error) ?? '')) return [];
      throw this.unreadable(this.runningDirectory, error);
    }
  }

  /** Where the run marked running as `id` is, among the runs the retention keeps; null when it is not (any more). */
  private async locateMarked(id: string): Promise<{ directory: string; name: string } | null> {
    if (!isPlainPathSegment(id)) return null;
    let mark: { kind?: unknown; subject?: unknown };
    try {
      mark = JSON.parse(await readFile(join(this.runningDirectory, id), 'utf8')) as typeof mark;
    } catch {
      // Gone meanwhile (the run ended), or half a file a crash left behind.
      return null;
    }
    if (!(RUN_KINDS as readonly unknown[]).includes(mark.kind) || typeof mark.subject !== 'string' || !isPlainPathSegment(mark.subject))
      return null;
    const directory = this.directoryOf(mark.kind as RunKind, mark.subject);
    const name = (await this.keptNames(directory)).find((each) => idOfName(each) === id);
    return name === undefined ? null : { directory, name };
  }

  /** The directory and file name of run `id`, among those the retention keeps; null when there is none. */
  private async locate(id: string): Promise<{ directory: string; name: string } | null> {
    if (!isPlainPathSegment(id)) return null;
    for (const kind of RUN_KINDS) {
      for (const subject of await this.subjectsOf(kind)) {
        const directory = this.directoryOf(kind, subject);
        const name = (await this.keptNames(directory)).find((each) => idOfName(each) === id);
        if (name !== undefined) return { directory, name };
      }
    }
    return null;
  }

  async list(query: RunQuery): Promise<RunRecord[]> {
    const runs = await this.runsOf(query, (names) => names.slice(-Math.max(0, query.limit)));
    return runs.sort(newestFirst).slice(0, Math.max(0, query.limit));
  }

  async search(search: RunSearch): Promise<RunPage> {
    return searchRunFiles(this, search);
  }

  async spentSince(query: SpendQuery): Promise<RunTotals> {
    const since = query.since.getTime();
    // Names carry the start: only the runs of the period are read.
    const runs = await this.runsOf(query, (names) => names.filter((name) => startOfName(name) >= since));
    return totalsOf(runs.filter((run) => Date.parse(run.started_at) >= since));
  }

  /** The kept runs of `query`'s kind and subject (of all, without them) whose names `pick` picks in each directory. */
  private async runsOf(query: { kind?: RunKind; subject?: string }, pick: (names: string[]) => string[]): Promise<RunRecord[]> {
    const runs: RunRecord[] = [];
    for (const kind of query.kind ? [query.kind] : RUN_KINDS) {
      for (const subject of query.subject !== undefined ? [query.subject] : await this.subjectsOf(kind)) {
        if (!isPlainPathSegment(subject)) continue;
        const directory = this.directoryOf(kind, subject);
        const read = await Promise.all(pick(await this.keptNames(directory)).map((name) => this.read(join(directory, name))));
        runs.push(...read.filter((run) => run !== null));
      }
    }
    return runs;
  }

  /** The names the retention keeps in `directory`, oldest first, read afresh. */
  async keptNames(directory: string): Promise<string[]> {
    const oldest = this.oldestKept();
    try {
      const names = (await this.directories.namesIn(directory)).filter((name) => startOfName(name) >= oldest);
      return names.slice(-this.retention.count);
    } catch (error) {
      throw this.unreadable(directory, error);
    }
  }

  async subjectsOf(kind: RunKind): Promise<string[]> {
    const directory = join(this.paths.runsDir, kind);
    try {
      const entries = await readdir(directory, { withFileTypes: true });
      return entries.filter((entry) => entry.isDirectory() && isPlainPathSegment(entry.name)).map((entry) => entry.name);
    } catch (error) {
      if (['ENOENT', 'ENOTDIR'].includes(errnoCode(error) ?? '')) return [];
      throw this.unreadable(directory, error);
    }
  }

  /** A run, or null when its file vanished (pruned meanwhile) or does not hold one. */
  async read(path: string): Promise<RunRecord | null> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if (['ENOENT', 'ENOTDIR', 'EISDIR'].includes(errnoCode(error) ?? '')) return null;
      throw this.unreadable(path, error);
    }
    try {
      const run = JSON.parse(text) as RunRecord;
      return typeof run === 'object' && run !== null && typeof run.id === 'string' && !isTooOld(run, this.retention, this.clock.now())
        ? run
        : null;
    } catch {
      // Half a file a crash left behind.
      return null;
    }
  }

  private oldestKept(): number {
    return oldestKept(this.retention, this.clock.now()).getTime();
  }

  directoryOf(kind: RunKind, subject: string): string {
    if (!isPlainPathSegment(subject)) {
      throw new InvalidInputError(
        ERROR_CODES.RUNS.INVALID_NAME,
        `The job or route "${subject}" cannot name a directory of the run ledger.`,
      );
    }
    return join(this.paths.runsDir, kind, subject);
  }

  private unreadable(path: string, error: unknown): FileStoreError {
    return new FileStoreError(
      ERROR_CODES.RUNS.UNREADABLE,
      `${fileStoreError('read', `the run ledger in ${path}`, error)}; give this user read access to it.`,
      { cause: error },
    );
  }
}
