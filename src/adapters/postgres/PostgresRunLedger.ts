import type { Clock } from '../../application/ports/Clock.js';
import type { RunLedger, RunPage, RunQuery, RunSearch, SpendQuery, TranscriptOwner } from '../../application/ports/RunLedger.js';
import { pageOf } from '../../domain/runs/runSearch.js';
import { SEARCH, searchParameters } from './postgresRunSearch.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';
import { emptyUsage, roundCost } from '../../domain/runs/usage.js';
import type { RunTotals } from '../../domain/runs/runTotals.js';
import {
  interruptedRun,
  newestFirst,
  oldestKept,
  RUN_KINDS,
  type RunClaim,
  type RunKind,
  type RunRecord,
  type RunRetention,
} from '../../domain/runs/RunRecord.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import type { PostgresDatabase, PreparedStatement } from './PostgresDatabase.js';
import { jsonbText } from './jsonbText.js';
import { amongNewest } from './runRetentionSql.js';

interface RecordRow {
  record: unknown;
}

/** Runs too old to keep, of any job or route, that one save deletes at most. */
const EXPIRED_PER_SAVE = 100;

/**
 * Writes run $1 (kind $2, subject $3, start $4, record $5) over its earlier row, then deletes
 * the other runs of its job or route beyond the newest $6 − 1 and up to EXPIRED_PER_SAVE runs of
 * any job or route that started before $7; never run $1. Rows another statement holds (another
 * save of that run, another save's delete) are skipped and left for a later save, so that saves
 * never wait for each other's deletes. Its transaction commits without waiting for the server's
 * disk (`synchronous_commit` off for it alone).
 */
const SAVE: PreparedStatement = { name: 'agent_runs_save', text: saveStatement(false) };

/** SAVE committed synchronously: for a run whose answer waits for its delivery, kept nowhere else. */
const SAVE_DURABLY: PreparedStatement = { name: 'agent_runs_save_durably', text: saveStatement(true) };

function saveStatement(synchronous: boolean): string {
  return `
    WITH commit_mode AS (SELECT set_config('synchronous_commit', '${synchronous ? 'on' : 'off'}', true)),
    saved AS (
      INSERT INTO agent_runs (id, kind, subject, started_at, record)
      SELECT $1::text, $2::text, $3::text, $4::timestamptz, $5::jsonb FROM commit_mode
      ON CONFLICT (id) DO UPDATE
        SET kind = EXCLUDED.kind, subject = EXCLUDED.subject, started_at = EXCLUDED.started_at, record = EXCLUDED.record
    ),
    surplus AS (
      SELECT id FROM agent_runs WHERE id IN (
        SELECT id FROM (
          SELECT id, row_number() OVER (ORDER BY started_at DESC, id DESC) AS place
          FROM agent_runs WHERE kind = $2 AND subject = $3 AND id <> $1
        ) AS others WHERE place >= $6
        UNION ALL
        (SELECT id FROM agent_runs WHERE started_at < $7 AND id <> $1 ORDER BY started_at LIMIT ${EXPIRED_PER_SAVE})
      )
      FOR UPDATE SKIP LOCKED
    ),
    transcripts_gone AS (
      DELETE FROM agent_run_transcripts WHERE id IN (
        SELECT id FROM surplus
        UNION ALL
        (SELECT id FROM agent_run_transcripts WHERE started_at < $7 AND id <> $1 ORDER BY started_at LIMIT ${EXPIRED_PER_SAVE})
      )
    )
    DELETE FROM agent_runs WHERE id IN (SELECT id FROM surplus)`;
}

/** A number field of a record's jsonb (`record->'usage'->'input_tokens'`), 0 when it is not a number. */
const numberAt = (path: string) => `CASE WHEN jsonb_typeof(${path}) = 'number' THEN (${path})::text::numeric ELSE 0 END`;
const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cached_input_tokens', 'model_turns', 'tool_calls'] as const;
const HAS_USAGE = `jsonb_typeof(record->'usage') = 'object'`;
const HAS_COST = `jsonb_typeof(record->'cost_usd') = 'number'`;

/**
 * What the runs of the kinds $1 (and the subject $2 when not null) that started at $3 or later,
 * at or after the retention's $4 and among the newest $5 of their job or route, spent: their
 * count, each usage field summed, the costs summed, and the runs with tokens and no cost.
 */
const SPENT_SINCE: PreparedStatement = {
  name: 'agent_runs_spent_since',
  text: `
    SELECT count(*)::int AS runs,
      ${USAGE_KEYS.map((key) => `coalesce(sum(${numberAt(`record->'usage'->'${key}'`)}), 0)::text AS ${key}`).join(', ')},
      coalesce(sum(${numberAt(`record->'cost_usd'`)}), 0)::text AS cost_usd,
      (count(*) FILTER (
        WHERE ${HAS_USAGE} AND NOT ${HAS_COST}
          AND ${numberAt(`record->'usage'->'input_tokens'`)} + ${numberAt(`record->'usage'->'output_tokens'`)} > 0
      ))::int AS unpriced_runs
    FROM agent_runs AS run
    WHERE run.kind = ANY($1::text[]) AND ($2::text IS NULL OR run.subject = $2)
      AND run.started_at >= $3 AND run.started_at >= $4 AND ${amongNewest('$5')}`,
};

interface SpentRow {
  runs: number;
  input_tokens: string;
  output_tokens: string;
  cached_input_tokens: string;
  model_turns: string;
  tool_calls: string;
  cost_usd: string;
  unpriced_runs: number;
}

/** Run $1, if it started at $2 or later and is among the newest $3 of its job or route. */
const GET: PreparedStatement = {
  name: 'agent_runs_get',
  text: `SELECT record FROM agent_runs AS run WHERE run.id = $1 AND run.started_at >= $2 AND ${amongNewest('$3')}`,
};

/** Writes the transcript $3 of run $1 (started at $2) over an earlier one. */
const SAVE_TRANSCRIPT: PreparedStatement = {
  name: 'agent_runs_save_transcript',
  text: `
    INSERT INTO agent_run_transcripts (id, started_at, transcript) VALUES ($1, $2::timestamptz, $3::jsonb)
    ON CONFLICT (id) DO UPDATE SET started_at = EXCLUDED.started_at, transcript = EXCLUDED.transcript`,
};

/** The transcript of run $1, if the run started at $2 or later and is among the newest $3 of its job or route. */
const TRANSCRIPT: PreparedStatement = {
  name: 'agent_runs_transcript',
  text: `
    SELECT kept.transcript FROM agent_run_transcripts AS kept JOIN agent_runs AS run ON run.id = kept.id
    WHERE kept.id = $1 AND run.started_at >= $2 AND ${amongNewest('$3')}`,
};

/** The newest $4 runs of the kinds $1 that started at $2 or later and are among the newest $3 of their job or route. */
const LIST: PreparedStatement = {
  name: 'agent_runs_list',
  text: `
    SELECT record FROM agent_runs AS run
    WHERE run.kind = ANY($1::text[]) AND run.started_at >= $2 AND ${amongNewest('$3')}
    ORDER BY run.started_at DESC, run.id DESC LIMIT $4`,
};

/** The newest $4 runs of kind $1 and job or route $2 that started at $3 or later ($4 is at most the retention's count). */
const LIST_OF_SUBJECT: PreparedStatement = {
  name: 'agent_runs_list_of_subject',
  text: `
    SELECT record FROM agent_runs
    WHERE kind = $1 AND subject = $2 AND started_at >= $3
    ORDER BY started_at DESC, id DESC LIMIT $4`,
};

/**
 * Run $1's redelivery claim becomes $2 when it is $3 (`null` for none), if the run started at $4
 * or later and is among the newest $5 of its job or route; the run as claimed, or no row. A
 * concurrent claim of the same run waits for the row and then finds the claim changed.
 */
const CLAIM: PreparedStatement = {
  name: 'agent_runs_claim_redelivery',
  text: `
    UPDATE agent_runs AS run SET record = jsonb_set(run.record, '{redelivery_claim}', $2::jsonb)
    WHERE run.id = $1 AND coalesce(run.record -> 'redelivery_claim', 'null'::jsonb) = $3::jsonb
      AND run.started_at >= $4 AND ${amongNewest('$5')}
    RETURNING run.record`,
};

/**
 * The runs of kind $1 saved last with `delivery_pending` true that started at $2 or later and
 * are among the newest $3 of their job or route, oldest first. Few rows ever match; the table
 * is bounded by the retention, so this reads it without an index of its own.
 */
const PENDING: PreparedStatement = {
  name: 'agent_runs_pending_deliveries',
  text: `
    SELECT record FROM agent_runs AS run
    WHERE run.kind = $1 AND run.record @> '{"delivery_pending": true}'::jsonb AND run.started_at >= $2 AND ${amongNewest('$3')}
    ORDER BY run.started_at, run.id`,
};

/**
 * The oldest $3 runs still running that started at $1 or later and are among the newest $2 of
 * their job or route. No index holds the status: the table is the retention's few thousand rows,
 * and this is read when a gateway starts and when it recovers a job.
 */
const RUNNING: PreparedStatement = {
  name: 'agent_runs_running',
  text: `
    SELECT record FROM agent_runs AS run
    WHERE run.record ->> 'status' = 'running' AND NOT run.record @> '{"delivery_pending": true}'::jsonb AND run.started_at >= $1 AND ${amongNewest('$2')}
    ORDER BY run.started_at, run.id LIMIT $3`,
};

/**
 * Run $1, if still running, started at $4 or later and among the newest $5 of its job or route,
 * becomes `error` with error $2 and finished_at $3; the run as recorded, or no row. A save of the
 * same run waits for the row, or this for it, so that a run never ends twice in one.
 */
const SETTLE_INTERRUPTED: PreparedStatement = {
  name: 'agent_runs_settle_interrupted',
  text: `
    UPDATE agent_runs AS run
    SET record = run.record || jsonb_build_object('status', 'error', 'error', $2::text, 'finished_at', $3::text)
    WHERE run.id = $1 AND run.record ->> 'status' = 'running' AND NOT run.record @> '{"delivery_pending": true}'::jsonb AND run.started_at >= $4 AND ${amongNewest('$5')}
    RETURNING run.record`,
};

/** The JSON text of a run for its jsonb column (see jsonbText). */
function storedTextOf(run: RunRecord): string {
  return jsonbText(run);
}

const isKind = (value: unknown): value is RunKind => (RUN_KINDS as readonly unknown[]).includes(value);

/** A stored run read back, or null when it is not one this version understands. */
function readStoredRun(value: unknown): RunRecord | null {
  if (!isJsonObject(value)) return null;
  const { id, kind, subject, started_at: startedAt } = value;
  if (typeof id !== 'string' || !isKind(kind) || typeof subject !== 'string' || typeof startedAt !== 'string') return null;
  return value as unknown as RunRecord;
}

const readRows = (rows: readonly RecordRow[]): RunRecord[] => rows.map((row) => readStoredRun(row.record)).filter((run) => run !== null);

/**
 * The run ledger in PostgreSQL (docs/scaling.md), one row per run in `agent_runs` holding the
 * record (its JSON form) beside its id, kind, job or route and start, so that every gateway
 * sharing the database sees every run. A save is one statement: the record is written over the
 * run's earlier one, and what the retention keeps no longer is deleted: the runs of its job or
 * route beyond the newest `retention.count` (the one just saved always kept), and runs of any
 * job or route, a removed one's too, that started more than `retention.days` days before the
 * clock's now. It commits without waiting for the server's disk, but for a run whose answer waits
 * for its delivery (`delivery_pending`), committed synchronously. Reads take only what the
 * retention keeps, whichever process wrote what, and never write. A failure is the database's
 * DatabaseUnavailableError, naming the database.
 */
export class PostgresRunLedger implements RunLedger {
  /** `retention`: `runs.retention_count` and `runs.retention_days` (runRetention). */
  constructor(
    private readonly database: PostgresDatabase,
    private readonly retention: RunRetention,
    private readonly clock: Clock,
  ) {}

  async save(run: RunRecord): Promise<void> {
    await this.database.query(run.delivery_pending === true ? SAVE_DURABLY : SAVE, [
      run.id,
      run.kind,
      run.subject,
      run.started_at,
      storedTextOf(run),
      this.retention.count,
      this.oldestKept(),
    ]);
  }

  async get(id: string): Promise<RunRecord | null> {
    return readRows(await this.database.query<RecordRow>(GET, [id, this.oldestKept(), this.retention.count]))[0] ?? null;
  }

  async claimForRedelivery(id: string, claim: RunClaim, abandoned: RunClaim | null): Promise<RunRecord | null> {
    const rows = await this.database.query<RecordRow>(CLAIM, [
      id,
      JSON.stringify(claim),
      JSON.stringify(abandoned),
      this.oldestKept(),
      this.retention.count,
    ]);
    return readRows(rows)[0] ?? null;
  }

  async pendingDeliveries(kind: RunKind): Promise<RunRecord[]> {
    return readRows(await this.database.query<RecordRow>(PENDING, [kind, this.oldestKept(), this.retention.count]));
  }

  async list(query: RunQuery): Promise<RunRecord[]> {
    const limit = Math.max(0, Math.floor(query.limit));
    if (limit === 0) return [];
    const kinds = query.kind ? [query.kind] : [...RUN_KINDS];
    if (query.subject === undefined)
      return readRows(await this.database.query<RecordRow>(LIST, [kinds, this.oldestKept(), this.retention.count, limit]));
    const perKind = await Promise.all(
      kinds.map((kind) =>
        this.database.query<RecordRow>(LIST_OF_SUBJECT, [kind, query.subject, this.oldestKept(), Math.min(limit, this.retention.count)]),
      ),
    );
    return readRows(perKind.flat()).sort(newestFirst).slice(0, limit);
  }

  async search(search: RunSearch): Promise<RunPage> {
    const limit = Math.max(0, Math.floor(search.limit));
    if (limit === 0) return { runs: [], next: null };
    const rows = await this.database.query<RecordRow>(SEARCH, searchParameters(search, this.oldestKept(), this.retention.count, limit + 1));
    return pageOf(readRows(rows), limit);
  }

  async running(limit: number): Promise<RunRecord[]> {
    const wanted = Math.max(0, Math.floor(limit));
    if (wanted === 0) return [];
    return readRows(await this.database.query<RecordRow>(RUNNING, [this.oldestKept(), this.retention.count, wanted]));
  }

  async settleInterrupted(id: string, why: string, at: Date): Promise<RunRecord | null> {
    // The fields as the other stores write them (interruptedRun), in one statement.
    const { error, finished_at: finishedAt } = interruptedRun({ status: 'running' } as RunRecord, why, at);
    const rows = await this.database.query<RecordRow>(SETTLE_INTERRUPTED, [id, error, finishedAt, this.oldestKept(), this.retention.count]);
    return readRows(rows)[0] ?? null;
  }

  async saveTranscript(run: TranscriptOwner, transcript: RunTranscript): Promise<void> {
    await this.database.query(SAVE_TRANSCRIPT, [run.id, run.started_at, jsonbText(transcript)]);
  }

  async transcriptOf(id: string): Promise<RunTranscript | null> {
    const rows = await this.database.query<{ transcript: unknown }>(TRANSCRIPT, [id, this.oldestKept(), this.retention.count]);
    const transcript = rows[0]?.transcript;
    return Array.isArray(transcript) ? (transcript as RunTranscript) : null;
  }

  async spentSince(query: SpendQuery): Promise<RunTotals> {
    const kinds = query.kind ? [query.kind] : [...RUN_KINDS];
    const [row] = await this.database.query<SpentRow>(SPENT_SINCE, [
      kinds,
      query.subject ?? null,
      query.since,
      this.oldestKept(),
      this.retention.count,
    ]);
    if (!row) return { runs: 0, usage: emptyUsage(), cost_usd: 0, unpriced_runs: 0 };
    const usage = emptyUsage();
    for (const key of USAGE_KEYS) usage[key] = Number(row[key]);
    return { runs: row.runs, usage, cost_usd: roundCost(Number(row.cost_usd)), unpriced_runs: row.unpriced_runs };
  }

  /** The earliest start the retention keeps, as of the clock's now. */
  private oldestKept(): Date {
    return oldestKept(this.retention, this.clock.now());
  }
}
