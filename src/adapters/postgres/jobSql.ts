import type { Job } from '../../domain/Job.js';
import { storedRecordOf } from '../../domain/JobRecord.js';
import { nameKey } from '../../domain/jobNames.js';

/**
 * The SQL of the PostgreSQL job store (PostgresJobRepository.ts) that spells rules of the domain:
 * which rows wait for a run and which are due (`dueTime` and `isDue` in domain/jobLifecycle.ts),
 * over the columns each write of a row sets from its job (`jobRowValues`). The contract test
 * test/contract/jobSqlDue.contract.test.ts holds the SQL to the domain's rule on generated jobs.
 */

/** Stores a new job's row; its values are `jobRowValues`. */
export const INSERT_JOB = 'INSERT INTO agent_jobs (id, name_key, state, enabled, next_run_at, record) VALUES ($1, $2, $3, $4, $5, $6)';

/** Rewrites a job's row (by its id, `$1`); its values are `jobRowValues`. */
export const UPDATE_JOB = 'UPDATE agent_jobs SET name_key = $2, state = $3, enabled = $4, next_run_at = $5, record = $6 WHERE id = $1';

/**
 * The values of a job's row, in the order of INSERT_JOB and UPDATE_JOB: its id, the columns the store looks it
 * up by (name, state, enabled, next run), and its record (keeping fields a newer version wrote).
 */
export function jobRowValues(job: Job, previous: Record<string, unknown> | undefined): unknown[] {
  return [job.id, nameKey(job.name), job.state, job.enabled, job.next_run_at, JSON.stringify(storedRecordOf(job, previous))];
}

/**
 * A row whose job waits for a run: `scheduled` and enabled, or `running` and enabled with runs
 * beside allowed (`runsBeside` in domain/jobRunsBeside.ts: the overlap policy `allow` on a cron
 * expression or an interval). A null `next_run_at` is neither before nor after any time, so such
 * a row is never due nor the next to be. The first half is the predicate of the partial index
 * `agent_jobs_due` and the second's state that of `agent_jobs_running` (migrations.ts), so that
 * queries by it use those indexes.
 */
export const WAITING_FOR_RUN =
  "((state = 'scheduled' AND enabled) OR (state = 'running' AND enabled AND record->>'overlap' = 'allow' AND record->'schedule'->>'kind' IN ('cron', 'interval')))";

/** A row whose job is due by the time the statement's parameter `at` (such as `$1`) holds. */
export function dueCondition(at: string): string {
  return `${WAITING_FOR_RUN} AND next_run_at <= ${at}`;
}

/** The order due rows are taken in: the one due first first, then the oldest row. */
export const DUE_ORDER = 'next_run_at, seq';
