import { chmod, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { inject, injectable } from 'inversify';
import lockfile from 'proper-lockfile';
import { Writer } from 'steno';
import type { Job } from '../../domain/Job.js';
import { SUPERSEDED_FIELDS, readJobRecord, type UnreadableRecord } from '../../domain/JobRecord.js';
import {
  JobStoreDamagedError,
  JobStoreUnavailableError,
  type JobChange,
  type JobRepository,
  type JobSnapshot,
} from '../../application/ports/JobRepository.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import {
  PRIVATE_FILE_MODE,
  describeFileSystemProblem,
  ensurePrivateDirectory,
  errnoCode,
} from './fileSystem.js';

/**
 * How long `modify` waits for other processes before giving up. Twenty processes queueing for a
 * lock that each holds for milliseconds get through in well under a second; the margin is for
 * slow disks and loaded machines.
 */
const LOCK_WAIT_MS = 30_000;
/**
 * A lock not refreshed for this long belongs to a process that died holding it and is taken
 * over. The holder refreshes it every LOCK_REFRESH_MS, so only a process stalled for longer
 * than the difference loses a lock it still holds.
 */
const LOCK_STALE_MS = 10_000;
const LOCK_REFRESH_MS = 2_000;
/** Backoff between attempts: doubles up to the cap, each wait randomized to ±50 % so contenders spread out. */
const FIRST_BACKOFF_MS = 5;
const MAX_BACKOFF_MS = 250;

/**
 * `modify` calls on one jobs file in this process, chained so that they take the cross-process
 * lock one after the other instead of polling for it against each other. Shared by every
 * repository instance because proper-lockfile keeps one lock per path per process.
 */
const inProcessQueues = new Map<string, Promise<unknown>>();

function runInTurn<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = inProcessQueues.get(key) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.catch(() => undefined);
  inProcessQueues.set(key, tail);
  void tail.then(() => {
    if (inProcessQueues.get(key) === tail) inProcessQueues.delete(key);
  });
  return run;
}

/** A record's place in the file: a job by id, or an unreadable record kept as found. */
type RecordSlot = { kind: 'job'; id: string } | { kind: 'unreadable'; value: unknown };

/** The jobs file as read, with what a rewrite needs to leave the parts we do not own untouched. */
interface StoredJobs {
  snapshot: JobSnapshot;
  /** Each readable record as found, by job id: fields this version does not know survive a rewrite. */
  recordsById: Map<string, Record<string, unknown>>;
  /** Every record in file order, so unreadable ones are written back where they were. */
  slots: RecordSlot[];
  /** Top-level fields other than `jobs` and `updated_at`, kept for whoever wrote them. */
  otherFields: Record<string, unknown>;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function parseStoredJobs(text: string, location: string): StoredJobs {
  let document: unknown;
  try {
    // A byte-order mark is how some editors save; it is not damage.
    document = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new JobStoreDamagedError(location, `it is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  let records: unknown[];
  let otherFields: Record<string, unknown> = {};
  if (Array.isArray(document)) {
    records = document;
  } else if (isPlainObject(document) && Array.isArray(document.jobs)) {
    records = document.jobs;
    otherFields = { ...document };
    delete otherFields.jobs;
    delete otherFields.updated_at;
  } else {
    throw new JobStoreDamagedError(location, 'its top level is neither a list of jobs nor an object with a "jobs" list');
  }

  const jobs: Job[] = [];
  const unreadable: UnreadableRecord[] = [];
  const recordsById = new Map<string, Record<string, unknown>>();
  const slots: RecordSlot[] = [];
  records.forEach((value, index) => {
    const reading = readJobRecord(value, index);
    if (reading.ok) {
      jobs.push(reading.job);
      recordsById.set(reading.job.id, value as Record<string, unknown>);
      slots.push({ kind: 'job', id: reading.job.id });
    } else {
      unreadable.push(reading.problem);
      slots.push({ kind: 'unreadable', value });
    }
  });
  return { snapshot: { jobs, unreadable }, recordsById, slots, otherFields };
}

/** The stored form of a job: the record it was read from, overwritten by every field the Job has. */
function recordOf(job: Job, storedRecord: Record<string, unknown> | undefined): Record<string, unknown> {
  const record: Record<string, unknown> = { ...storedRecord, ...job };
  // Every Job carries `skills`, which supersedes the legacy fields.
  for (const field of SUPERSEDED_FIELDS) delete record[field];
  return record;
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
    records.push(recordOf(job, stored?.recordsById.get(job.id)));
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

/** The cross-process lock as held by one `modify`. */
interface HeldLock {
  /** Set when proper-lockfile found the lock taken over while we held it. */
  readonly lost: boolean;
  release(): Promise<void>;
}

/**
 * Jobs in `$AGENT_HOME/cron/jobs.json` (decisions §2). Reads need no lock because every write
 * replaces the file atomically (steno writes a temporary file and renames it over the old one);
 * read-modify-writes hold a lock directory beside the file, `jobs.json.lock`, taken with
 * proper-lockfile, so that the gateway and any number of `agent` commands never lose an update.
 */
@injectable()
export class FileJobRepository implements JobRepository {
  private readonly writer: Writer;
  private readonly lockPath: string;

  constructor(@inject(TOKENS.AgentPaths) private readonly paths: AgentPaths) {
    this.writer = new Writer(paths.jobsFile);
    this.lockPath = `${paths.jobsFile}.lock`;
  }

  /**
   * Reads every job without taking the lock. An absent file (or home) is an empty store.
   * Throws JobStoreDamagedError when the file is not a job store and JobStoreUnavailableError
   * when it cannot be read.
   */
  async load(): Promise<JobSnapshot> {
    const stored = await this.read();
    return stored ? stored.snapshot : { jobs: [], unreadable: [] };
  }

  /**
   * Holds the lock (waiting up to 30 s for other processes), reads the file afresh, applies
   * `change`, and writes the result unless `change` returned the array it was given. Creates
   * `cron/` (0700) and the file (0600) when they are missing. A damaged file is never
   * overwritten: JobStoreDamagedError. A throwing `change` writes nothing and its error is
   * passed on.
   */
  modify<T>(change: (jobs: readonly Job[]) => JobChange<T>): Promise<T> {
    return runInTurn(resolve(this.paths.jobsFile), () => this.modifyHoldingLock(change));
  }

  private async modifyHoldingLock<T>(change: (jobs: readonly Job[]) => JobChange<T>): Promise<T> {
    await this.ensureCronDirectory();
    const lock = await this.acquireLock();
    try {
      const stored = await this.read();
      const current = stored ? stored.snapshot.jobs : [];
      const { jobs, result } = change(current);
      if (jobs === current) return result;
      if (lock.lost) {
        throw new JobStoreUnavailableError(
          `Did not write the job store ${this.paths.jobsFile}: its lock ${this.lockPath} was lost while the change was being made (this process stalled or another one removed the lock), so nothing was changed; try again.`,
        );
      }
      await this.write(serialize(stored, jobs, new Date()));
      return result;
    } finally {
      await lock.release();
    }
  }

  private async read(): Promise<StoredJobs | null> {
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
      await this.writer.write(text);
      // The new file is created with the umask's mode; it sits in a 0700 directory until this
      // chmod narrows it, and the next write repairs it should we crash in between.
      await chmod(this.paths.jobsFile, PRIVATE_FILE_MODE);
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

  /**
   * proper-lockfile's own `retries` would also retry EACCES or ENOTDIR for the whole wait, so
   * the waiting is done here and only for a lock that another process holds (ELOCKED).
   */
  private async acquireLock(): Promise<HeldLock> {
    const state = { lost: false };
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let backoff = FIRST_BACKOFF_MS; ; backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)) {
      try {
        const release = await lockfile.lock(this.paths.jobsFile, {
          lockfilePath: this.lockPath,
          realpath: false,
          retries: 0,
          stale: LOCK_STALE_MS,
          update: LOCK_REFRESH_MS,
          // The default handler throws from a timer and kills the process; a lost lock only
          // has to stop this modify from writing.
          onCompromised: () => {
            state.lost = true;
          },
        });
        return {
          get lost() {
            return state.lost;
          },
          release: async () => {
            try {
              await release();
            } catch {
              // Already released because it was lost, or the directory could not be removed:
              // either way others take it over once it is stale; the change itself is done.
            }
          },
        };
      } catch (error) {
        if (errnoCode(error) !== 'ELOCKED') throw this.unavailable('lock', error);
        if (Date.now() >= deadline) {
          throw new JobStoreUnavailableError(
            `Cannot change the job store ${this.paths.jobsFile}: other agent processes kept its lock ${this.lockPath} for more than ${LOCK_WAIT_MS / 1000} seconds; if no agent process is running, remove ${this.lockPath} and try again.`,
            { cause: error },
          );
        }
        await delay(backoff * (0.5 + Math.random()));
      }
    }
  }

  private unavailable(action: 'read' | 'write' | 'lock', error: unknown): JobStoreUnavailableError {
    const code = errnoCode(error);
    return new JobStoreUnavailableError(
      `Cannot ${action} the job store ${this.paths.jobsFile}: ${describeFileSystemProblem(code)} (${code ?? 'unknown error'}); make ${this.paths.cronDir} a directory this user can write to, or set AGENT_HOME to one.`,
      { cause: error },
    );
  }
}
