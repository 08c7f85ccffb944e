import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import type { RunOutputStore, StoredRunReport } from '../../application/ports/RunOutputStore.js';
import type { PostgresDatabase, Transaction } from './PostgresDatabase.js';

/** Reports of one job started within the same second that get names of their own. */
const MAX_SAME_NAME = 100;

/**
 * Run reports in PostgreSQL (docs/scaling.md), one row per job and file name in
 * `agent_run_reports` holding the Markdown text, so that every gateway sharing the database shows
 * every run of a job, whichever ran it. File names are timestamps that sort in time order (byte by
 * byte, whatever the database's collation), so "newest" is "last by name", as in the files.
 *
 * A report is named to people as `report <job id>/<file name> in <host:port/database>` (never
 * with the password): what `agent cron run` prints after `output:` and `--json` shows as `file`.
 * A failure is the database's DatabaseUnavailableError, naming the database.
 */
export class PostgresRunOutputStore implements RunOutputStore {
  constructor(private readonly database: PostgresDatabase) {}

  /**
   * Writes the report, then deletes the job's oldest reports until `keep` remain, atomically. A report of the same name (two runs started within one second) is kept: the new
   * one is written as `<name>_2.md`, `_3` …, which sorts after it. The report just written always
   * survives, even if a clock set back made its name sort before older ones; `keep` below 1
   * counts as 1. Returns where the report is, as `read` names it.
   */
  async save(jobId: string, fileName: string, content: string, keep: number): Promise<string> {
    const kept = Math.max(1, Math.floor(keep)) - 1;
    // The usual case, a name no report of the job has, in one statement (one round trip, one
    // commit): a gateway writes a report at the end of every run, and holding a pooled
    // connection for a transaction of four round trips slowed every run when many end at once.
    // The DELETE sees the rows as they were before the INSERT, so it counts the others only.
    const [written] = await this.database.query<{ file_name: string }>(
      `WITH inserted AS (
         INSERT INTO agent_run_reports (job_id, file_name, content) VALUES ($1, $2, $3)
         ON CONFLICT (job_id, file_name) DO NOTHING RETURNING file_name
       ), pruned AS (
         DELETE FROM agent_run_reports WHERE EXISTS (SELECT 1 FROM inserted) AND job_id = $1 AND file_name <> $2 AND file_name NOT IN (
           SELECT file_name FROM agent_run_reports WHERE job_id = $1 AND file_name <> $2 ORDER BY file_name DESC LIMIT $4)
       )
       SELECT file_name FROM inserted`,
      [jobId, fileName, content, kept],
    );
    if (written) return this.locationOf(jobId, written.file_name);
    // Two runs started within one second: the next free numbered name, in a transaction.
    return this.database.transaction(async (tx) => {
      const name = await this.insertNew(tx, jobId, fileName, content);
      await tx.query(
        `DELETE FROM agent_run_reports WHERE job_id = $1 AND file_name <> $2 AND file_name NOT IN (
           SELECT file_name FROM agent_run_reports WHERE job_id = $1 AND file_name <> $2 ORDER BY file_name DESC LIMIT $3)`,
        [jobId, name, kept],
      );
      return this.locationOf(jobId, name);
    });
  }

  async removeAll(jobId: string): Promise<void> {
    await this.database.query('DELETE FROM agent_run_reports WHERE job_id = $1', [jobId]);
  }

  async list(jobId: string): Promise<string[]> {
    const rows = await this.database.query<{ file_name: string }>(
      'SELECT file_name FROM agent_run_reports WHERE job_id = $1 ORDER BY file_name DESC',
      [jobId],
    );
    return rows.map((row) => row.file_name);
  }

  async read(jobId: string, fileName: string): Promise<StoredRunReport | null> {
    const [row] = await this.database.query<{ content: string }>(
      'SELECT content FROM agent_run_reports WHERE job_id = $1 AND file_name = $2',
      [jobId, fileName],
    );
    return row ? { fileName, location: this.locationOf(jobId, fileName), content: row.content } : null;
  }

  /** Inserts the report under `fileName`, or the first free `<base>_<n>.md`; returns the name used. */
  private async insertNew(tx: Transaction, jobId: string, fileName: string, content: string): Promise<string> {
    const base = fileName.endsWith('.md') ? fileName.slice(0, -3) : fileName;
    for (let attempt = 1; ; attempt += 1) {
      const name = attempt === 1 ? fileName : `${base}_${attempt}.md`;
      const inserted = await tx.query(
        'INSERT INTO agent_run_reports (job_id, file_name, content) VALUES ($1, $2, $3) ON CONFLICT (job_id, file_name) DO NOTHING RETURNING file_name',
        [jobId, name, content],
      );
      if (inserted.length > 0) return name;
      if (attempt >= MAX_SAME_NAME) {
        throw new AppError(
          ERROR_CODES.OUTPUT.UNAVAILABLE,
          `Cannot write a report of job ${jobId} in ${this.database.location.label}: ${MAX_SAME_NAME} of its reports are named ${fileName} or a numbered form of it; check the clock of this host.`,
        );
      }
    }
  }

  private locationOf(jobId: string, fileName: string): string {
    return `report ${jobId}/${fileName} in ${this.database.location.label}`;
  }
}
