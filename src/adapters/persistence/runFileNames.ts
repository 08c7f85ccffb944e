import type { RunRecord } from '../../domain/runs/RunRecord.js';

/* The names of the run ledger's files (FileRunLedger). */

/** `20260620-080100-000_<id>.json`: the start in UTC to the millisecond, so names sort by start. */
export const FILE_NAME = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-(\d{3})_(.+)\.json$/;

export function fileNameOf(run: Pick<RunRecord, 'id' | 'started_at'>): string {
  const iso = new Date(run.started_at).toISOString();
  return `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${iso.slice(20, 23)}_${run.id}.json`;
}

export function idOfName(name: string): string | null {
  return FILE_NAME.exec(name)?.[8] ?? null;
}

/** When the run of a file name started (ms since the epoch). */
export function startOfName(name: string): number {
  const [, year, month, day, hour, minute, second, milli] = FILE_NAME.exec(name)!;
  return Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), Number(milli));
}
