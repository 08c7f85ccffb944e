import { findJob, type Job } from '../../domain/Job.js';
import { readJobRecord, storedRecordOf, type UnreadableRecord } from '../../domain/JobRecord.js';
import { assertNameFree, nameKey, withUniqueName, type NamedJob } from '../../domain/jobNames.js';
import type { JobRepository, JobSnapshot, JobUpdate, TickCandidates, TickSettlement } from '../../application/ports/JobRepository.js';
import type { PostgresDatabase, Transaction } from './PostgresDatabase.js';

interface JobRow {
  id: string;
  record: Record<string, unknown>;
}

/** One advisory lock serializes the writes that decide a name (create, rename): names are few and rarely change. */
const NAME_LOCK = 0x6e616d65; // "name"

const COLUMNS = 'id, record';
/** The channel every change to the jobs is announced on, at commit: gateways watch it for jobs changed elsewhere. */
export const JOBS_CHANGED_CHANNEL = 'agent_jobs_changed';
const ANNOUNCE = `SELECT pg_notify('${JOBS_CHANGED_CHANNEL}', '')`;
const IS_DUE = "state = 'scheduled' AND enabled AND next_run_at <= $1";

/** The rows read back as jobs, and the rows that are not jobs this version understands. */
function readRows(rows: readonly JobRow[]): { jobs: Job[]; unreadable: UnreadableRecord[]; records: Map<string, Record<string, unknown>> } {
  const jobs: Job[] = [];
  const unreadable: UnreadableRecord[] = [];
  const records = new Map<string, Record<string, unknown>>();
  rows.forEach((row, index) => {
    const reading = readJobRecord(row.record, index);
    if (reading.ok) {
      jobs.push(reading.job);
      records.set(reading.job.id, row.record);
    } else {
      unreadable.push({ ...reading.problem, id: row.id });
    }
  });
  return { jobs, unreadable, records };
}

/** The values of a job's row: its record (keeping fields a newer version wrote) and the columns looked up by. */
function rowValues(job: Job, previous: Record<string, unknown> | undefined): unknown[] {
  return [job.id, nameKey(job.name), job.state, job.enabled, job.next_run_at, JSON.stringify(storedRecordOf(job, previous))];
}

/**
 * Jobs in PostgreSQL (docs/scaling.md), one row each, for any number of gateways and commands
 * sharing the database. Every change is one transaction holding the row locks of the jobs it
 * reads, so changes to one job are serialized; a tick takes the due rows with `FOR UPDATE SKIP
 * LOCKED`, so ticks on several replicas never take the same slot and never wait for each other.
 */
export class PostgresJobRepository implements JobRepository {
  constructor(private readonly database: PostgresDatabase) {}

  /** Calls `onChange` when any process may have changed the jobs; returns the unwatch. */
  watch(onChange: () => void): () => void {
    return this.database.listen(JOBS_CHANGED_CHANNEL, onChange);
  }

  async load(): Promise<JobSnapshot> {
    const { jobs, unreadable } = readRows(await this.database.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs ORDER BY seq`));
    return { jobs, unreadable };
  }

  async findById(id: string): Promise<Job | null> {
    return readRows(await this.database.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE id = $1`, [id])).jobs[0] ?? null;
  }

  create(job: Job, nameWasChosen: boolean): Promise<Job> {
    return this.database.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [NAME_LOCK]);
      const named = withUniqueName(await namesLike(tx, job.name), job, nameWasChosen);
      await tx.query(
        'INSERT INTO agent_jobs (id, name_key, state, enabled, next_run_at, record) VALUES ($1, $2, $3, $4, $5, $6)',
        rowValues(named, undefined),
      );
      await tx.query(ANNOUNCE);
      return named;
    });
  }

  update<T>(reference: string, change: (job: Job) => JobUpdate<T>): Promise<T> {
    return this.database.transaction(async (tx) => {
      const { target, record } = await this.lockReference(tx, reference);
      return this.store(tx, target, record, change);
    });
  }

  updateById<T>(id: string, change: (job: Job) => JobUpdate<T>): Promise<T | null> {
    return this.database.transaction(async (tx) => {
      const { jobs, records } = readRows(await tx.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE id = $1 FOR UPDATE`, [id]));
      const target = jobs[0];
      return target ? this.store(tx, target, records.get(target.id), change) : null;
    });
  }

  remove(reference: string): Promise<Job> {
    return this.database.transaction(async (tx) => {
      const { target } = await this.lockReference(tx, reference);
      await tx.query('DELETE FROM agent_jobs WHERE id = $1', [target.id]);
      await tx.query(ANNOUNCE);
      return target;
    });
  }

  async nextRunAt(after?: Date): Promise<Date | null> {
    const [row] = after
      ? await this.database.query<{ at: Date | null }>(
          "SELECT min(next_run_at) AS at FROM agent_jobs WHERE state = 'scheduled' AND enabled AND next_run_at > $1",
          [after],
        )
      : await this.database.query<{ at: Date | null }>("SELECT min(next_run_at) AS at FROM agent_jobs WHERE state = 'scheduled' AND enabled");
    return row?.at ?? null;
  }

  async peek(dueBy: Date): Promise<{ anyDue: boolean; running: readonly Job[] }> {
    const [due, running] = await Promise.all([
      this.database.query<{ due: boolean }>(`SELECT EXISTS (SELECT 1 FROM agent_jobs WHERE ${IS_DUE}) AS due`, [dueBy]),
      this.database.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE state = 'running' ORDER BY seq`),
    ]);
    return { anyDue: due[0]?.due === true, running: readRows(running).jobs };
  }

  settleDue<T>(dueBy: Date, limit: number, settle: (candidates: TickCandidates) => TickSettlement<T>): Promise<T> {
    return this.database.transaction(async (tx) => {
      const running = readRows(await tx.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE state = 'running' ORDER BY seq FOR UPDATE SKIP LOCKED`));
      const due = readRows(
        await tx.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE ${IS_DUE} ORDER BY next_run_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED`, [
          dueBy,
          Math.max(0, limit),
        ]),
      );
      const { changed, result } = settle({ running: running.jobs, due: due.jobs });
      for (const job of changed) {
        await this.write(tx, job, running.records.get(job.id) ?? due.records.get(job.id));
      }
      if (changed.length > 0) await tx.query(ANNOUNCE);
      return result;
    });
  }

  /** The job `reference` means, its row locked: by id, else by name (findJob's rules and errors). */
  private async lockReference(tx: Transaction, reference: string): Promise<{ target: Job; record: Record<string, unknown> | undefined }> {
    const wanted = reference.trim();
    const rows = await tx.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE id = $1 OR name_key = $2 ORDER BY seq FOR UPDATE`, [
      wanted,
      nameKey(wanted),
    ]);
    const { jobs, unreadable, records } = readRows(rows);
    const target = findJob(jobs, wanted, unreadable);
    return { target, record: records.get(target.id) };
  }

  private async store<T>(tx: Transaction, target: Job, record: Record<string, unknown> | undefined, change: (job: Job) => JobUpdate<T>): Promise<T> {
    const { job, result } = change(target);
    if (job === target) return result;
    if (nameKey(job.name) !== nameKey(target.name)) {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [NAME_LOCK]);
      assertNameFree(await namesLike(tx, job.name), job.name, target.id);
    }
    await this.write(tx, job, record);
    await tx.query(ANNOUNCE);
    return result;
  }

  private async write(tx: Transaction, job: Job, previous: Record<string, unknown> | undefined): Promise<void> {
    await tx.query(
      'UPDATE agent_jobs SET name_key = $2, state = $3, enabled = $4, next_run_at = $5, record = $6 WHERE id = $1',
      rowValues(job, previous),
    );
  }
}

/** The jobs whose name is `name` or a numbered form of it ("name (2)"), ignoring case: all the name rules need. */
async function namesLike(tx: Transaction, name: string): Promise<NamedJob[]> {
  const key = nameKey(name);
  const pattern = `${key.replace(/[\\%_]/g, (special) => `\\${special}`)} (%`;
  const rows = await tx.query<{ id: string; name: string }>(
    "SELECT id, record->>'name' AS name FROM agent_jobs WHERE name_key = $1 OR name_key LIKE $2 ORDER BY seq",
    [key, pattern],
  );
  return rows.map((row) => ({ id: row.id, name: row.name }));
}
