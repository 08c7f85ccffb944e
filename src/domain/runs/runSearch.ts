/*
 * Which runs of the ledger a search names (the dashboard's run list, docs/dashboard.md, Runs):
 * the filters as one predicate, the order the list goes in, and where a page of it ends. The
 * stores narrow by these themselves where they can (RunLedger.search); this is the rule they
 * follow, and what the in-memory ledger applies as it stands.
 */
import type { RunKind, RunRecord, RunStatus } from './RunRecord.js';

/** The statuses a run can be listed by, in the order the filter offers them. */
export const RUN_STATUSES: readonly RunStatus[] = [
  'running',
  'ok',
  'error',
  'delivery_failed',
  'delivery_queued',
  'blocked_config',
  'skipped',
];

/** Where a run stands in the list: its start and id (the list goes newest first, then by id, greatest first). */
export interface RunPosition {
  /** ISO 8601 UTC. */
  started_at: string;
  id: string;
}

/** What a search narrows the runs to; every field left out narrows nothing. */
export interface RunFilter {
  kind?: RunKind;
  /** A job's id or a route's name (with `kind`). */
  subject?: string;
  status?: RunStatus;
  /** Runs that started at this time or later. */
  from?: Date;
  /** Runs that started before this time. */
  to?: Date;
  /**
   * Runs whose id, job or route, event, delivery id, prompt, answer or error holds this text,
   * without regard to case.
   */
  text?: string;
}

/** The fields the text of a search is looked for in. */
export function searchedTexts(run: RunRecord): Array<string | null> {
  return [run.id, run.subject, run.name, run.event, run.delivery_id, run.prompt, run.answer, run.error];
}

/** Whether `run` is among the runs `filter` names. */
export function matchesRunFilter(run: RunRecord, filter: RunFilter): boolean {
  if (filter.kind !== undefined && run.kind !== filter.kind) return false;
  if (filter.subject !== undefined && run.subject !== filter.subject) return false;
  if (filter.status !== undefined && run.status !== filter.status) return false;
  const started = Date.parse(run.started_at);
  if (filter.from !== undefined && started < filter.from.getTime()) return false;
  if (filter.to !== undefined && started >= filter.to.getTime()) return false;
  const text = filter.text?.trim().toLowerCase() ?? '';
  if (text !== '' && !searchedTexts(run).some((each) => each !== null && each.toLowerCase().includes(text))) return false;
  return true;
}

/** Compares ids as the list orders them: by UTF-16 code units, the same everywhere (not by a locale). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether a run at `position` comes after `after` in the list (newest first, then by id, greatest first). */
export function comesAfter(position: RunPosition, after: RunPosition): boolean {
  const difference = Date.parse(position.started_at) - Date.parse(after.started_at);
  return difference < 0 || (difference === 0 && compareIds(position.id, after.id) < 0);
}

/** The order of the list: newest first by start, then by id, greatest first. */
export function listOrder(a: RunPosition, b: RunPosition): number {
  return Date.parse(b.started_at) - Date.parse(a.started_at) || compareIds(b.id, a.id);
}

/** The position of a run in the list. */
export function positionOf(run: RunPosition): RunPosition {
  return { started_at: new Date(run.started_at).toISOString(), id: run.id };
}

/**
 * A page of `limit` runs from `sorted` (in list order, and one more than a page when there is
 * one): the runs, and the position to go on after when more follow (null: none).
 */
export function pageOf<T extends RunPosition>(sorted: readonly T[], limit: number): { runs: T[]; next: RunPosition | null } {
  const runs = sorted.slice(0, Math.max(0, limit));
  const next = sorted.length > runs.length && runs.length > 0 ? positionOf(runs[runs.length - 1]!) : null;
  return { runs, next };
}
