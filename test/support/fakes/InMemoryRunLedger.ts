import type { RunLedger, RunPage, RunQuery, RunSearch, SpendQuery, TranscriptOwner } from '../../../src/application/ports/RunLedger.js';
import { comesAfter, listOrder, matchesRunFilter, pageOf } from '../../../src/domain/runs/runSearch.js';
import type { RunTranscript } from '../../../src/domain/runs/RunTranscript.js';
import { totalsOf, type RunTotals } from '../../../src/domain/runs/runTotals.js';
import {
  DEFAULT_RUN_RETENTION,
  interruptedRun,
  isTooOld,
  newestFirst,
  sameClaim,
  type RunClaim,
  type RunKind,
  type RunRecord,
  type RunRetention,
} from '../../../src/domain/runs/RunRecord.js';

/** The run ledger in memory, with the retention rules of the real ones. */
export class InMemoryRunLedger implements RunLedger {
  private readonly runs = new Map<string, RunRecord>();
  private readonly transcripts = new Map<string, RunTranscript>();

  constructor(
    private readonly retention: RunRetention = DEFAULT_RUN_RETENTION,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async save(run: RunRecord): Promise<void> {
    this.saves.push({ id: run.id, pending: run.delivery_pending === true });
    this.runs.set(run.id, structuredClone(run));
    const same = [...this.runs.values()]
      .filter((each) => each.kind === run.kind && each.subject === run.subject && each.id !== run.id)
      .sort(newestFirst);
    for (const old of same.slice(Math.max(0, this.retention.count - 1))) this.forget(old.id);
    for (const old of same) if (isTooOld(old, this.retention, this.now())) this.forget(old.id);
  }

  private forget(id: string): void {
    this.runs.delete(id);
    this.transcripts.delete(id);
  }

  async saveTranscript(run: TranscriptOwner, transcript: RunTranscript): Promise<void> {
    this.transcripts.set(run.id, structuredClone(transcript));
  }

  async transcriptOf(id: string): Promise<RunTranscript | null> {
    const transcript = this.transcripts.get(id);
    return transcript !== undefined && (await this.get(id)) !== null ? structuredClone(transcript) : null;
  }

  async get(id: string): Promise<RunRecord | null> {
    const run = this.runs.get(id);
    return run && !isTooOld(run, this.retention, this.now()) ? structuredClone(run) : null;
  }

  async list(query: RunQuery): Promise<RunRecord[]> {
    return [...this.runs.values()]
      .filter(
        (run) => (query.kind === undefined || run.kind === query.kind) && (query.subject === undefined || run.subject === query.subject),
      )
      .filter((run) => !isTooOld(run, this.retention, this.now()))
      .sort(newestFirst)
      .slice(0, Math.max(0, query.limit))
      .map((run) => structuredClone(run));
  }

  async search(search: RunSearch): Promise<RunPage> {
    const after = search.after ?? null;
    const found = [...this.runs.values()]
      .filter((run) => !isTooOld(run, this.retention, this.now()) && matchesRunFilter(run, search))
      .filter((run) => after === null || comesAfter(run, after))
      .sort(listOrder)
      .map((run) => structuredClone(run));
    return pageOf(found, search.limit);
  }

  async spentSince(query: SpendQuery): Promise<RunTotals> {
    const runs = [...this.runs.values()].filter(
      (run) =>
        (query.kind === undefined || run.kind === query.kind) &&
        (query.subject === undefined || run.subject === query.subject) &&
        Date.parse(run.started_at) >= query.since.getTime() &&
        !isTooOld(run, this.retention, this.now()),
    );
    return totalsOf(runs);
  }

  /** Every save, in order, and whether the ledger was asked to make it durable (a pending delivery). */
  readonly saves: Array<{ id: string; pending: boolean }> = [];

  async pendingDeliveries(kind: RunKind): Promise<RunRecord[]> {
    return [...this.runs.values()]
      .filter((run) => run.kind === kind && run.delivery_pending === true && !isTooOld(run, this.retention, this.now()))
      .sort(newestFirst)
      .reverse()
      .map((run) => structuredClone(run));
  }

  async claimForRedelivery(id: string, claim: RunClaim, abandoned: RunClaim | null): Promise<RunRecord | null> {
    // No await before the write: the check and the claim are one step.
    const run = this.runs.get(id);
    if (run === undefined || isTooOld(run, this.retention, this.now()) || !sameClaim(run.redelivery_claim, abandoned)) return null;
    const claimed = { ...run, redelivery_claim: claim };
    this.runs.set(id, structuredClone(claimed));
    return structuredClone(claimed);
  }

  async running(limit: number): Promise<RunRecord[]> {
    return [...this.runs.values()]
      .filter((run) => run.status === 'running' && run.delivery_pending !== true && !isTooOld(run, this.retention, this.now()))
      .sort((a, b) => newestFirst(b, a))
      .slice(0, Math.max(0, limit))
      .map((run) => structuredClone(run));
  }

  async settleInterrupted(id: string, why: string, at: Date): Promise<RunRecord | null> {
    const run = this.runs.get(id);
    if (run === undefined || run.status !== 'running' || run.delivery_pending === true || isTooOld(run, this.retention, this.now()))
      return null;
    const settled = interruptedRun(run, why, at);
    this.runs.set(id, structuredClone(settled));
    return structuredClone(settled);
  }
}
