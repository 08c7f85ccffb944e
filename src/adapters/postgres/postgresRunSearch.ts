/**
 * The run list's search in PostgreSQL (PostgresRunLedger.search): one statement that narrows by
 * kind, job or route, status, time range, text and the page's start, and stops at the page's
 * end. It walks `agent_runs_newest` (started_at DESC, id DESC) or, with a job or route,
 * `agent_runs_subject_newest`; the text is matched with ILIKE over the record's fields, which
 * reads each row until the page is full (the table is the retention's few thousand rows).
 * Ids are ordered by `COLLATE "C"`, byte order, the order of the other stores (runSearch.ts) but
 * for characters beyond U+FFFF; equal starts are rare, so the index still leads.
 */
import type { RunSearch } from '../../application/ports/RunLedger.js';
import { RUN_KINDS } from '../../domain/runs/RunRecord.js';
import type { PreparedStatement } from './PostgresDatabase.js';
import { amongNewest } from './runRetentionSql.js';

/** The record's fields the text is looked for in (runSearch.ts: searchedTexts). */
const SEARCHED = ['name', 'event', 'delivery_id', 'prompt', 'answer', 'error'].map((field) => `run.record->>'${field}'`);

/**
 * Runs of the kinds $1 (and of subject $2, status $3, when not null) that started at $4 or later
 * and before $5 (each when not null), after the position ($6, $7) when not null, whose fields
 * match the ILIKE pattern $8 when not null, kept by the retention ($9, $10): the first $11 in list order.
 */
export const SEARCH: PreparedStatement = {
  name: 'agent_runs_search',
  text: `
    SELECT record FROM agent_runs AS run
    WHERE run.kind = ANY($1::text[]) AND ($2::text IS NULL OR run.subject = $2)
      AND ($3::text IS NULL OR run.record ->> 'status' = $3)
      AND ($4::timestamptz IS NULL OR run.started_at >= $4) AND ($5::timestamptz IS NULL OR run.started_at < $5)
      AND ($6::timestamptz IS NULL OR run.started_at < $6 OR (run.started_at = $6 AND run.id COLLATE "C" < $7::text))
      AND ($8::text IS NULL OR concat_ws(E'\\n', run.id, run.subject, ${SEARCHED.join(', ')}) ILIKE $8)
      AND run.started_at >= $9 AND ${amongNewest('$10')}
    ORDER BY run.started_at DESC, run.id COLLATE "C" DESC LIMIT $11`,
};

/** `text` as an ILIKE pattern that matches it anywhere, its own `%`, `_` and `\` taken as they are. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/** The parameters of SEARCH for `search`, the retention's oldest start and count, and the rows wanted. */
export function searchParameters(search: RunSearch, oldestKept: Date, keep: number, rows: number): unknown[] {
  const text = search.text?.trim() ?? '';
  return [
    search.kind ? [search.kind] : [...RUN_KINDS],
    search.subject ?? null,
    search.status ?? null,
    search.from ?? null,
    search.to ?? null,
    search.after ? search.after.started_at : null,
    search.after ? search.after.id : null,
    text === '' ? null : containsPattern(text),
    oldestKept,
    keep,
    rows,
  ];
}
