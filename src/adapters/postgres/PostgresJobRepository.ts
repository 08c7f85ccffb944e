import type { Job } from '../../domain/Job.js';
import { findJob } from '../../domain/jobLookup.js';
import { readJobRecords, type RecordsReading } from '../../domain/JobRecord.js';
import { assertNameFree, nameKey, sameName, withUniqueName, type NamedJob } from '../../domain/jobNames.js';
import type {
  JobRepository,
  JobsCheck,
  JobSnapshot,
  JobUpdate,
  SettleOptions,
  TickCandidates,
  TickSettlement,
} from '../../application/ports/JobRepository.js';
import type { PostgresDatabase, Transaction } from './PostgresDatabase.js';
import type { LeaseFence } from './PostgresReplicaLeases.js';
import { StatementBatcher } from './StatementBatcher.js';
import { DUE_ORDER, INSERT_JOB, UPDATE_JOB, WAITING_FOR_RUN, dueCondition, jobRowValues } from './jobSql.js';

interface JobRow {
  id: string;
  record: Record<string, unknown>;
}

/** A row as `updateById` reads it: with its version (`xmin`, which every update of the row changes). */
interface VersionedRow extends JobRow {
  version: string;
}

/** A write `updateById` makes: the row's new values, stored only if the row is still at `version`. */
interface VersionedWrite {
  id: string;
  values: unknown[];
  version: string;
}

/** One advisory lock serializes the writes that decide a name (create, rename): names are few and rarely change. */
const NAME_LOCK = 0x6e616d65; // "name"
/** The advisory lock that writes given a check (JobsCheck: the chains') take, one at a time. */
const CHECK_LOCK = 0x63686b73; // "chks"

const COLUMNS = 'id, record';
/** The channel every change to the jobs is announced on, at commit: gateways watch it for jobs changed elsewhere. */
export const JOBS_CHANGED_CHANNEL = 'agent_jobs_changed';
const ANNOUNCE = `SELECT pg_notify('${JOBS_CHANGED_CHANNEL}', '')`;

/** The rows read back as jobs, and the rows that are not jobs this version understands (by their row's id). */
function readRows(rows: readonly JobRow[]): RecordsReading {
  return readJobRecords(
    rows.map((row) => row.record),
    rows.map((row) => row.id),
  );
}

/**
 * Jobs in PostgreSQL (docs/scaling.md), one row each, for any number of gateways and commands
 * sharing the database. Every change is one transaction holding the row locks of the jobs it
 * reads, so changes to one job are serialized; a tick takes the due rows with `FOR UPDATE SKIP
 * LOCKED`, so ticks on several replicas never take the same slot and never wait for each other.
 */
export class PostgresJobRepository implements JobRepository {
  /** The reads of `updateById` and `findById`, batched: one statement reads the rows of many. */
  private readonly reads = new StatementBatcher<string, VersionedRow | null>((ids) => this.readVersionedRows(ids));
  /** The writes of `updateById`, batched: one statement, one commit, writes many rows. */
  private readonly writes = new StatementBatcher<VersionedWrite, boolean>((writes) => this.writeUnchangedRows(writes));

  constructor(
    private readonly database: PostgresDatabase,
    /** This process's gateway lease, when it holds one: a tick claims and recovers only while it holds, in its term. */
    private readonly fence?: LeaseFence,
  ) {}

  /** Calls `onChange` when any process may have changed the jobs; returns the unwatch. */
  watch(onChange: () => void): () => void {
    return this.database.listen(JOBS_CHANGED_CHANNEL, onChange);
  }

  async load(): Promise<JobSnapshot> {
    const { jobs, unreadable } = readRows(await this.database.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs ORDER BY seq`));
    return { jobs, unreadable };
  }

  async findById(id: string): Promise<Job | null> {
    const row = await this.reads.submit(id);
    return row ? (readRows([row]).jobs[0] ?? null) : null;
  }

  create(job: Job, nameWasChosen: boolean, check?: JobsCheck): Promise<Job> {
    return this.database.transaction(async (tx) => {
      // Locks in one order everywhere (rows, then checks, then names), so that none waits in a circle.
      if (check) await tx.query('SELECT pg_advisory_xact_lock($1)', [CHECK_LOCK]);
      await tx.query('SELECT pg_advisory_xact_lock($1)', [NAME_LOCK]);
      const named = withUniqueName(await namesLike(tx, job.name), job, nameWasChosen);
      if (check) check(named, [...(await this.allIn(tx)), named]);
      await tx.query(INSERT_JOB, jobRowValues(named, undefined));
      await tx.query(ANNOUNCE);
      return named;
    });
  }

  update<T>(reference: string, change: (job: Job) => JobUpdate<T>, check?: JobsCheck): Promise<T> {
    return this.database.transaction(async (tx) => {
      const { target, record } = await this.lockReference(tx, reference);
      if (!check) return this.store(tx, target, record, change);
      // Writes given a check go one at a time; the others' rows are read once this one holds that lock.
      await tx.query('SELECT pg_advisory_xact_lock($1)', [CHECK_LOCK]);
      const others = (await this.allIn(tx)).filter((each) => each.id !== target.id);
      return this.store(tx, target, record, (current) => {
        const changed = change(current);
        if (changed.job !== current) check(changed.job, [...others, changed.job]);
        return changed;
      });
    });
  }

  /** Every readable job, read in the transaction `tx`. */
  private async allIn(tx: Transaction): Promise<Job[]> {
    return readRows(await tx.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs ORDER BY seq`)).jobs;
  }

  /**
   * Reads the row, applies `change` and writes the result only if the row is still the version
   * read (its `xmin`); when another process changed it meanwhile, reads it again and applies
   * `change` to that (changes are pure). So a claim or a run's end is one read and one
   * autocommitted write, and a change that changes nothing (a stale fire) writes nothing and
   * waits for no disk. Reads and writes made at the same time, by concurrent fires say, share
   * statements (StatementBatcher), and so the disk write of one commit. A rename goes the locked
   * way: names are checked under their lock.
   */
  async updateById<T>(id: string, change: (job: Job) => JobUpdate<T>): Promise<T | null> {
    for (;;) {
      const row = await this.reads.submit(id);
      const { jobs, recordsById } = readRows(row ? [row] : []);
      const target = jobs[0];
      if (!row || !target) return null;
      const { job, result } = change(target);
      if (job === target) return result;
      if (!sameName(job.name, target.name)) return this.updateByIdLocked(id, change);
      if (await this.writes.submit({ id, values: jobRowValues(job, recordsById.get(target.id)), version: row.version })) return result;
    }
  }

  /** `updateById` holding the row lock from the read to the write. */
  private updateByIdLocked<T>(id: string, change: (job: Job) => JobUpdate<T>): Promise<T | null> {
    return this.database.transaction(async (tx) => {
      const { jobs, recordsById } = readRows(await tx.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE id = $1 FOR UPDATE`, [id]));
      const target = jobs[0];
      return target ? this.store(tx, target, recordsById.get(target.id), change) : null;
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

  async followersOf(id: string): Promise<Job[]> {
    // Containment: a row whose `after` holds a link to `id`, whatever else the link says.
    const rows = await this.database.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE record->'after' @> $1::jsonb ORDER BY seq`, [
      JSON.stringify([{ job: id }]),
    ]);
    return readRows(rows).jobs;
  }

  async nextRunAt(after?: Date): Promise<Date | null> {
    const [row] = after
      ? await this.database.query<{ at: Date | null }>(
          `SELECT min(next_run_at) AS at FROM agent_jobs WHERE ${WAITING_FOR_RUN} AND next_run_at > $1`,
          [after],
        )
      : await this.database.query<{ at: Date | null }>(`SELECT min(next_run_at) AS at FROM agent_jobs WHERE ${WAITING_FOR_RUN}`);
    return row?.at ?? null;
  }

  async peek(dueBy: Date): Promise<{ anyDue: boolean; running: readonly Job[] }> {
    const [due, running] = await Promise.all([
      this.database.query<{ due: boolean }>(`SELECT EXISTS (SELECT 1 FROM agent_jobs WHERE ${dueCondition('$1')}) AS due`, [dueBy]),
      this.database.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE state = 'running' ORDER BY seq`),
    ]);
    return { anyDue: due[0]?.due === true, running: readRows(running).jobs };
  }

  settleDue<T>(
    dueBy: Date,
    limit: number,
    settle: (candidates: TickCandidates) => TickSettlement<T>,
    options: SettleOptions = {},
  ): Promise<T> {
    return this.database.transaction(async (tx) => {
      // A gateway whose lease is in doubt, or has lapsed on the database's clock, claims nothing
      // and judges nobody: it starts no run until its lease is renewed.
      if (!(await this.underLiveLease(tx))) {
        tx.keepNothing();
        return settle({ running: [], due: [] }).result;
      }
      // Locking the running rows would hold up the runs recording their ends, on every replica.
      const running = readRows(
        options.running === false
          ? []
          : await tx.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE state = 'running' ORDER BY seq FOR UPDATE SKIP LOCKED`),
      );
      const due = readRows(
        await tx.query<JobRow>(
          `SELECT ${COLUMNS} FROM agent_jobs WHERE ${dueCondition('$1')} ORDER BY ${DUE_ORDER} LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [dueBy, Math.max(0, limit)],
        ),
      );
      const { changed, result } = settle({ running: running.jobs, due: due.jobs });
      // Rows locked and none changed: nothing to wait for the disk for.
      if (changed.length === 0) tx.keepNothing();
      for (const job of changed) {
        await this.write(tx, job, running.recordsById.get(job.id) ?? due.recordsById.get(job.id));
      }
      if (changed.length > 0) await tx.query(ANNOUNCE);
      return result;
    });
  }

  /** Whether this process may claim: it holds no lease (a command), or its lease holds, in its term, on the database's clock. */
  private async underLiveLease(tx: Transaction): Promise<boolean> {
    const term = this.fence?.term() ?? null;
    if (term === null) return true;
    if (!this.fence!.holds()) return false;
    const [row] = await tx.query<{ live: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM agent_gateways WHERE claimant = $1 AND epoch = $2 AND lease_until >= now()) AS live',
      [term.claimant, term.epoch],
    );
    return row?.live === true;
  }

  /** The rows of `ids` with their versions, null for an id without one: one statement for all. */
  private async readVersionedRows(ids: readonly string[]): Promise<Array<VersionedRow | null>> {
    const rows = await this.database.query<VersionedRow>(
      `SELECT ${COLUMNS}, xmin::text AS version FROM agent_jobs WHERE id = ANY($1::text[])`,
      [[...new Set(ids)]],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /**
   * Stores each write whose row is still at its version, in one statement (one transaction),
   * announced once; whether each was stored. Of several writes of one row only the first is
   * tried: the others were made from a version that write replaces.
   */
  private async writeUnchangedRows(writes: readonly VersionedWrite[]): Promise<boolean[]> {
    const tried = new Map<string, VersionedWrite>();
    for (const write of writes) if (!tried.has(write.id)) tried.set(write.id, write);
    const columns = Array.from({ length: 7 }, (): unknown[] => []);
    for (const write of tried.values()) [...write.values, write.version].forEach((value, index) => columns[index]!.push(value));
    const stored = await this.database.query<{ id: string }>(
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::timestamptz[], $6::jsonb[], $7::xid[])
           AS input (id, name_key, state, enabled, next_run_at, record, version)
       ), written AS (
         UPDATE agent_jobs AS job
            SET name_key = input.name_key, state = input.state, enabled = input.enabled, next_run_at = input.next_run_at, record = input.record
           FROM input
          WHERE job.id = input.id AND job.xmin = input.version
         RETURNING job.id
       )
       SELECT id, pg_notify('${JOBS_CHANGED_CHANNEL}', '') FROM written`,
      columns,
    );
    const storedIds = new Set(stored.map((row) => row.id));
    return writes.map((write) => tried.get(write.id) === write && storedIds.has(write.id));
  }

  /** The job `reference` means, its row locked: by id, else by name (findJob's rules and errors). */
  private async lockReference(tx: Transaction, reference: string): Promise<{ target: Job; record: Record<string, unknown> | undefined }> {
    const wanted = reference.trim();
    const rows = await tx.query<JobRow>(`SELECT ${COLUMNS} FROM agent_jobs WHERE id = $1 OR name_key = $2 ORDER BY seq FOR UPDATE`, [
      wanted,
      nameKey(wanted),
    ]);
    const { jobs, unreadable, recordsById } = readRows(rows);
    const target = findJob(jobs, wanted, unreadable);
    return { target, record: recordsById.get(target.id) };
  }

  private async store<T>(
    tx: Transaction,
    target: Job,
    record: Record<string, unknown> | undefined,
    change: (job: Job) => JobUpdate<T>,
  ): Promise<T> {
    const { job, result } = change(target);
    if (job === target) {
      // Only the row lock was taken (a stale or gone fire, a pause of a paused job): a commit would
      // wait for the disk for nothing.
      tx.keepNothing();
      return result;
    }
    if (!sameName(job.name, target.name)) {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [NAME_LOCK]);
      assertNameFree(await namesLike(tx, job.name), job.name, target.id);
    }
    await this.write(tx, job, record);
    await tx.query(ANNOUNCE);
    return result;
  }

  private async write(tx: Transaction, job: Job, previous: Record<string, unknown> | undefined): Promise<void> {
    await tx.query(UPDATE_JOB, jobRowValues(job, previous));
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
