/* The run ledger's retention in SQL, shared by PostgresRunLedger's statements. */

/**
 * Whether the row `run` is among the newest `count` runs of its job or route: fewer than that
 * many of them started after it (or at the same instant with a greater id). It reads at most
 * `count` entries of an index, so that a list of the newest runs of every job stops at its limit
 * instead of ranking the whole table.
 */
export const amongNewest = (count: string) => `(
  SELECT count(*) FROM (
    SELECT FROM agent_runs AS newer
    WHERE newer.kind = run.kind AND newer.subject = run.subject AND (newer.started_at, newer.id) > (run.started_at, run.id)
    LIMIT ${count}
  ) AS newer) < ${count}`;
