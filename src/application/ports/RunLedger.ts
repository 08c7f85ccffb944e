import type { RunClaim, RunKind, RunRecord } from '../../domain/runs/RunRecord.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';

/** The run a transcript is of: enough to find where its record is, or will be. */
export type TranscriptOwner = Pick<RunRecord, 'id' | 'kind' | 'subject' | 'started_at'>;
import type { RunTotals } from '../../domain/runs/runTotals.js';
import type { RunFilter, RunPosition } from '../../domain/runs/runSearch.js';

/** A page of the run list (docs/dashboard.md, Runs): `filter`'s runs after `after`, at most `limit`. */
export interface RunSearch extends RunFilter {
  /** The position of the last run of the page before (RunPage.next); absent or null: the first page. */
  after?: RunPosition | null;
  limit: number;
}

/** One page of a search: its runs in list order, and where the next page starts (null: this is the last). */
export interface RunPage {
  runs: RunRecord[];
  next: RunPosition | null;
}

/** Whose spending to sum: of one job or route (`kind` and `subject`), of one kind, or of every run. */
export interface SpendQuery {
  kind?: RunKind;
  /** A job's id or a route's name; with it, `kind` is required. */
  subject?: string;
  /** Runs that started at this time or later. */
  since: Date;
}

/** Which runs to list: of one kind, of one job or route, the newest `limit`. */
export interface RunQuery {
  kind?: RunKind;
  /** A job's id or a route's name; with it, `kind` is required. */
  subject?: string;
  limit: number;
}

/**
 * The run ledger (docs/runs.md): one structured record per cron or webhook run. Promises:
 * - `save` stores the record, replacing the one with its id (a run is saved when it starts and
 *   again when it ends); it does not wait for the disk: the ledger shows runs, the job store and
 *   the webhook inbox are what keep a run from being lost or repeated. A run saved with
 *   `delivery_pending` true is the exception: its answer is kept nowhere else until delivered, so
 *   that save resolves only once the record is on disk (synced; committed synchronously);
 * - each job or route keeps its newest `retention.count` runs, and no run that started more
 *   than `retention.days` days ago is listed; the run just saved is always kept;
 * - `list` returns the newest first (by start); reading never creates anything, so it works in
 *   a home this user cannot write;
 * - no run stays `running` once its process is gone: a run saved `running` carries its
 *   `claimant`, `running` lists what still runs, and `settleInterrupted` records one whose
 *   process is gone `error`, `interrupted: …` (AbandonedRuns decides which).
 */
export interface RunLedger {
  save(run: RunRecord): Promise<void>;
  /** The run with this id, or null. */
  get(id: string): Promise<RunRecord | null>;
  list(query: RunQuery): Promise<RunRecord[]>;
  /**
   * One page of the runs `search` names, among those kept (runSearch.ts: matchesRunFilter), in
   * list order: newest first by start, then by id, greatest first (by UTF-16 code units), so that
   * the order is total and a page goes on where the one before ended whatever was saved
   * meanwhile. `next` is the position of the page's last run when more runs follow, else null.
   * Reads only; reads no transcript.
   */
  search(search: RunSearch): Promise<RunPage>;
  /**
   * Claims run `id` for a redelivery of its answer (docs/runs.md): when its `redelivery_claim`
   * is none, or is exactly `abandoned` (a claim the caller found abandoned), it becomes `claim`,
   * and the run as claimed is returned. Otherwise nothing changes and null is returned: another
   * claim holds it, or there is no such run (among those kept). Atomic against every other claim
   * of the run, in this process or any other sharing the ledger. The redelivery then saves the
   * run with its outcome and without the claim.
   */
  claimForRedelivery(id: string, claim: RunClaim, abandoned: RunClaim | null): Promise<RunRecord | null>;
  /**
   * The runs of `kind` whose last save had `delivery_pending` true (answers waiting for their
   * delivery), among those kept, oldest first by start; empty when there are none. Reads only.
   */
  pendingDeliveries(kind: RunKind): Promise<RunRecord[]>;
  /**
   * The runs still `running`, of every kind, job and route, oldest first, at most `limit` (among
   * those kept), but for answers waiting for their delivery (`delivery_pending`, which the
   * gateway's start delivers rather than ends): what is looked at for runs whose process is gone. Reads only; cheap when none
   * runs (a process looks at every start).
   */
  running(limit: number): Promise<RunRecord[]>;
  /**
   * Records run `id`, found running after its process was gone, as ended: when it is still
   * `running` it becomes `error` with `error` `interrupted: <why>` and `finished_at` `at`, its
   * other fields kept, and the run as recorded is returned. A run that ended meanwhile, one whose answer waits
   * for its delivery, or one not kept is left as it is: null. Idempotent; never reopens a run.
   */
  settleInterrupted(id: string, why: string, at: Date): Promise<RunRecord | null>;
  /**
   * Stores the transcript of run `run.id` (docs/runs.md, Transcripts), replacing an earlier one,
   * apart from its record so that listing runs never reads transcripts. It may be saved before
   * the run's record is; it is kept as long as the record (the same retention) and removed with it.
   */
  saveTranscript(run: TranscriptOwner, transcript: RunTranscript): Promise<void>;
  /** The transcript of run `id`; null when it has none, or when the run is not kept (any more). Reads only. */
  transcriptOf(id: string): Promise<RunTranscript | null>;
  /**
   * What the runs `query` names spent, summed over those kept that started at `query.since` or
   * later (docs/runs.md, Usage and cost): `agent cron show`'s totals and the daily caps. Reads only.
   */
  spentSince(query: SpendQuery): Promise<RunTotals>;
}
