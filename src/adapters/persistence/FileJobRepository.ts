import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { inject, injectable } from 'inversify';
import type { Job } from '../../domain/Job.js';
import { readJobRecords, storedRecordOf } from '../../domain/JobRecord.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import { JobStoreDamagedError, JobStoreUnavailableError, type JobSnapshot } from '../../application/ports/JobRepository.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { WholeListJobRepository, type ListChangeFunction } from './WholeListJobRepository.js';
import { LOCK_WAIT_MS, LockWaitExpired, acquireFileLock, runInTurn, type HeldLock } from './fileLock.js';
import { fileStoreError, ensurePrivateDirectory, errnoCode, withoutByteOrderMark, writeFileDurably } from './fileSystem.js';

/** A change waiting for its turn of the file, with its caller's promise. */
interface WaitingChange {
  change: ListChangeFunction<unknown>;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
}

/** A record's place in the file: a job by id, or an unreadable record kept as found. */
type RecordSlot = { kind: 'job'; id: string } | { kind: 'unreadable'; value: unknown };

/** The jobs file as read, with what a rewrite needs to leave the parts we do not own untouched. */
/**
 * What tells one version of jobs.json from another: its inode, size and times to the nanosecond.
 * Every write is a new file renamed over the old one, so a new version has a new inode.
 */
function fileIdentity(stats: { ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint }): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

interface StoredJobs {
  snapshot: JobSnapshot;
  /** Each readable record as found, by job id: fields this version does not know survive a rewrite. */
  recordsById: Map<string, Record<string, unknown>>;
  /** Every record in file order, so unreadable ones are written back where they were. */
  slots: RecordSlot[];
  /** Top-level fields other than `jobs` and `updated_at`, kept for whoever wrote them. */
  otherFields: Record<string, unknown>;
}

function parseStoredJobs(text: string, location: string): StoredJobs {
  let document: unknown;
  try {
    document = JSON.parse(withoutByteOrderMark(text));
  } catch (error) {
    throw new JobStoreDamagedError(location, `it is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  let records: unknown[];
  let otherFields: Record<string, unknown> = {};
  if (Array.isArray(document)) {
    records = document;
  } else if (isJsonObject(document) && Array.isArray(document.jobs)) {
    records = document.jobs;
    otherFields = { ...document };
    delete otherFields.jobs;
    delete otherFields.updated_at;
  } else {
    throw new JobStoreDamagedError(location, 'its top level is neither a list of jobs nor an object with a "jobs" list');
  }

  const { jobs, unreadable, recordsById, readings } = readJobRecords(records);
  const slots = readings.map((job, index): RecordSlot =>
    job ? { kind: 'job', id: job.id } : { kind: 'unreadable', value: records[index] },
  );
  return { snapshot: { jobs, unreadable }, recordsById, slots, otherFields };
}

/**
 * The records to write: the jobs in the order given, each unreadable record placed right after
 * the nearest job that preceded it in the file and still exists (at the start when none does).
 */
function arrangeRecords(stored: StoredJobs | null, jobs: readonly Job[]): unknown[] {
  const unreadableAfter = new Map<string | null, unknown[]>();
  if (stored) {
    const remainingIds = new Set(jobs.map((job) => job.id));
    let anchor: string | null = null;
    for (const slot of stored.slots) {
      if (slot.kind === 'job') {
        if (remainingIds.has(slot.id)) anchor = slot.id;
      } else {
        const group = unreadableAfter.get(anchor) ?? [];
        group.push(slot.value);
        unreadableAfter.set(anchor, group);
      }
    }
  }
  const records: unknown[] = [...(unreadableAfter.get(null) ?? [])];
  for (const job of jobs) {
    records.push(storedRecordOf(job, stored?.recordsById.get(job.id)));
    const following = unreadableAfter.get(job.id);
    if (following) {
      records.push(...following);
      // Two jobs sharing an id must not write the same unreadable records twice.
      unreadableAfter.delete(job.id);
    }
  }
  return records;
}

function serialize(stored: StoredJobs | null, jobs: readonly Job[], now: Date): string {
  const document = { jobs: arrangeRecords(stored, jobs), updated_at: now.toISOString(), ...stored?.otherFields };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * Jobs in `$AGENT_HOME/cron/jobs.json` (docs/cron.md). Reads need no lock because every write
 * replaces the file atomically: a temporary file of the writer's own, created 0600, synced, and
 * renamed over the old one, then the directory synced, all before the write is acknowledged (a
 * claim written before a run survives a power cut). Read-modify-writes hold the kernel lock on
 * `jobs.json.lock`, which a dead holder loses at once and a stalled one never loses, so the
 * gateway and any number of `agent` commands never lose an update nor run a slot twice.
 */
@injectable()
export class FileJobRepository extends WholeListJobRepository {
  private readonly lockPath: string;
  /** Changes asked for and not yet written; the first of them starts the next write. */
  private readonly waiting: WaitingChange[] = [];
  /** Whether a turn that will take the waiting changes is queued. */
  private scheduled = false;
  /**
   * The file as last read, by the identity of the file it was read from (see fileIdentity):
   * every write replaces the file, so while that identity holds, so do its contents. Reads at
   * the same moment share one read. A thousand runs ending at once each look up their job's
   * followers, and must not each parse every job.
   */
  private lastRead: { identity: string; stored: Promise<StoredJobs | null> } | null = null;

  constructor(@inject(TOKENS.AgentPaths) private readonly paths: AgentPaths) {
    super();
    this.lockPath = `${paths.jobsFile}.lock`;
  }

  /**
   * Reads every job without taking the lock. An absent file (or home) is an empty store.
   * Throws JobStoreDamagedError when the file is not a job store and JobStoreUnavailableError
   * when it cannot be read.
   */
  async load(): Promise<JobSnapshot> {
    const stored = await this.read();
    // The caller's own copies: the jobs read are kept for the next read.
    return stored ? structuredClone(stored.snapshot) : { jobs: [], unreadable: [] };
  }

  /** The jobs as last read, shared: looking one up copies only what it hands out. */
  protected override async jobsToRead(): Promise<readonly Job[]> {
    return (await this.read())?.snapshot.jobs ?? [];
  }

  protected override copyOf(job: Job): Job {
    return structuredClone(job);
  }

  /**
   * Holds the lock (waiting up to 30 s for other processes), reads the file afresh, applies
   * `change`, and writes the result unless `change` returned the array it was given. Creates
   * `cron/` (0700) and the file (0600) when they are missing. A damaged file is never
   * overwritten: JobStoreDamagedError. A throwing `change` writes nothing and its error is
   * passed on.
   *
   * Changes asked for while one is being written wait, and then go together: one lock, one read
   * and one synced write for all of them, each applied to what the one before made, each caller
   * answered once that write is on disk. A thousand runs ending at once then cost a few writes of
   * the file, not a thousand (each a whole rewrite of every job).
   */
  modify<T>(change: ListChangeFunction<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ change, resolve: resolve as (result: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        void this.writeWaiting();
      }
    });
  }

  /** Takes every change waiting now and writes them in one turn of the file. */
  private writeWaiting(): Promise<void> {
    return runInTurn(resolve(this.paths.jobsFile), async () => {
      // What is asked for from now on goes in the next turn.
      this.scheduled = false;
      const batch = this.waiting.splice(0);
      try {
        await this.modifyHoldingLock(batch);
      } catch (error) {
        for (const each of batch) each.reject(error);
      }
    });
  }

  private async modifyHoldingLock(batch: readonly WaitingChange[]): Promise<void> {
    await this.ensureCronDirectory();
    const lock = await this.acquireLock();
    try {
      const stored = await this.read();
      const current = stored ? stored.snapshot.jobs : [];
      const unreadable = stored ? stored.snapshot.unreadable : [];
      let jobs: readonly Job[] = current;
      const settle: Array<() => void> = [];
      for (const each of batch) {
        try {
          const changed = each.change(jobs, unreadable);
          jobs = changed.jobs;
          settle.push(() => each.resolve(changed.result));
        } catch (error) {
          // Its change is left out; the others go on from the list as it was before it.
          settle.push(() => each.reject(error));
        }
      }
      if (jobs !== current) await this.write(serialize(stored, jobs, new Date()));
      for (const answer of settle) answer();
    } finally {
      await lock.release();
    }
  }

  private async read(): Promise<StoredJobs | null> {
    let identity: string;
    try {
      identity = fileIdentity(await stat(this.paths.jobsFile, { bigint: true }));
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return null;
      throw this.unavailable('read', error);
    }
    if (this.lastRead?.identity === identity) return this.lastRead.stored;
    // Read after the look: what is read is that file or a newer one, which has an identity of its own.
    const stored = this.readFile();
    this.lastRead = { identity, stored };
    stored.catch(() => {
      if (this.lastRead?.stored === stored) this.lastRead = null;
    });
    return stored;
  }

  private async readFile(): Promise<StoredJobs | null> {
    let text: string;
    try {
      text = await readFile(this.paths.jobsFile, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return null;
      throw this.unavailable('read', error);
    }
    return parseStoredJobs(text, this.paths.jobsFile);
  }

  private async write(text: string): Promise<void> {
    try {
      await writeFileDurably(this.paths.jobsFile, text);
    } catch (error) {
      throw this.unavailable('write', error);
    }
  }

  private async ensureCronDirectory(): Promise<void> {
    try {
      await ensurePrivateDirectory(this.paths.cronDir);
    } catch (error) {
      throw this.unavailable('write', error);
    }
  }

  private async acquireLock(): Promise<HeldLock> {
    try {
      return await acquireFileLock(this.lockPath);
    } catch (error) {
      if (!(error instanceof LockWaitExpired)) throw this.unavailable('lock', error);
      throw new JobStoreUnavailableError(
        `Cannot change the job store ${this.paths.jobsFile}: another agent process has held its lock ${this.lockPath} for more than ${LOCK_WAIT_MS / 1000} seconds (is one stopped, e.g. with Ctrl-Z?); let it go on or end it, then try again.`,
        { cause: error },
      );
    }
  }

  private unavailable(action: 'read' | 'write' | 'lock', error: unknown): JobStoreUnavailableError {
    return new JobStoreUnavailableError(
      `${fileStoreError(action, `the job store ${this.paths.jobsFile}`, error)}; make ${this.paths.cronDir} a directory this user can write to, or set AGENT_HOME to one.`,
      { cause: error },
    );
  }
}
