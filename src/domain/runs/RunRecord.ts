import type { LastStatus } from '../RunOutcome.js';
import type { RunUsage } from './usage.js';

/** What a ledger record is the run of: a job's (cron) or a webhook event's. */
export const RUN_KINDS = ['cron', 'webhook'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/**
 * Where a run stands: `running` until it ends, then one of the closed `last_status` words
 * (webhook runs use the same words: a delivered answer is `ok`, a failed run `error`, an event
 * the gateway could not run `blocked_config`). `skipped` is a cron slot found overdue and not run
 * (catch-up policy `skip`): a record of its own, which never becomes the job's `last_status`.
 */
export type RunStatus = 'running' | 'skipped' | LastStatus;

/** How the answer went to one target. */
export interface RunDelivery {
  /** The target as written in the job or route (`telegram:-100123`, `local`, `octo/widgets#12`, `the log`). */
  target: string;
  /** `delivered` (the platform confirmed), `queued` (admitted to a bot-chat mailbox), `failed`. */
  outcome: 'delivered' | 'queued' | 'failed';
  /** The platform's message ids (one per part), or the bot-chat receipt; empty when none. */
  message_ids: string[];
  /** Why it failed; null otherwise. */
  error: string | null;
}

/**
 * One run in the ledger (docs/runs.md): every cron run and every webhook run, structured. Field
 * names are those of its JSON form (`--json`, the store).
 */
export interface RunRecord {
  /** Unique: a cron run's own id; a webhook run's is its event's id (a run repeated after a restart updates it). */
  id: string;
  kind: RunKind;
  /** The job's id, or the route's name. */
  subject: string;
  /** The job's name at the time of the run, or the route's name. */
  name: string;
  /** Cron: the slot the run was for (ISO 8601 UTC); null for a run asked for by hand, and for webhook runs. */
  slot: string | null;
  /** Webhook: the event kind (`pull_request`); null for cron runs. */
  event: string | null;
  /** Webhook: the sender's delivery id; null for cron runs. */
  delivery_id: string | null;
  /** ISO 8601 UTC. */
  started_at: string;
  /** ISO 8601 UTC; null while the run goes on. */
  finished_at: string | null;
  status: RunStatus;
  /** `provider/model` (or the command) that answered; null when no model answered. */
  model: string | null;
  /** What the agent was asked (the job's prompt, the rendered webhook prompt); null when nothing ran. */
  prompt: string | null;
  /** The answer as the agent gave it; null when there is none. */
  answer: string | null;
  /** Why the run failed or was not run; null otherwise. */
  error: string | null;
  /** One entry per target the answer was sent to, in order; empty when nothing was sent. */
  deliveries: RunDelivery[];
  /**
   * ISO 8601 UTC: when the recorded answer was last delivered again (`agent cron redeliver`,
   * `agent webhook redeliver`); null or absent when it never was.
   */
  redelivered_at?: string | null;
  /** Who last delivered the answer again (`dashboard` for the dashboard's Redeliver); absent when not said. */
  redelivered_by?: string;
  /** Who is delivering the answer again right now, and since when; null or absent when nobody is. */
  redelivery_claim?: RunClaim | null;
  /**
   * True while the run's answer is recorded and waits for its delivery (a gateway's cron run: its
   * run slot is free already, its status still `running`); the process delivering it holds
   * `redelivery_claim`. False or absent otherwise.
   */
  delivery_pending?: boolean;
  /**
   * `<host>:<pid>` of the process running it, while it is `running` (and left as it was after):
   * once that process is gone, the run is recorded `error`, `interrupted: …` (RunLedger). Null or
   * absent when not known (a webhook run, a record of an earlier version).
   */
  claimant?: string | null;
  /**
   * What the run's model turns spent, summed (docs/runs.md, Usage and cost); null or absent when
   * nothing was counted (no agent ran, a command agent that reports no usage).
   */
  usage?: RunUsage | null;
  /** What `usage` cost in US dollars at the configured prices; null or absent when a model it used has no price. */
  cost_usd?: number | null;
  /** Cron: which attempt of its slot the run was, 1 for the first, when it was retried or is a retry (docs/runs.md, Retries). */
  attempt?: number;
  /** Cron: the id of the first attempt's run, on a retry. */
  retry_of?: string;
  /** Cron: who asked for this run by hand, when said (`dashboard` for the dashboard's Retry); absent otherwise. */
  requested_by?: string;
  /** Cron: the run this one runs again (the dashboard's Retry of a run); absent otherwise. */
  rerun_of?: string;
  /**
   * The id of the run's trace (32 hex digits) when traces are exported (docs/traces.md); null or
   * absent otherwise.
   */
  trace_id?: string | null;
}

/** Who asked for a run by hand, and which run it runs again (RunRecord `requested_by`, `rerun_of`). */
export interface RunRequest {
  by: string;
  rerun_of?: string;
}

/** The error of a run found running after its process was gone: `interrupted: <why>`. */
export function interruptedRun(run: RunRecord, why: string, at: Date): RunRecord {
  return { ...run, status: 'error', finished_at: at.toISOString(), error: `interrupted: ${why}` };
}

/** A process's claim on a run, for its redelivery: `<host>:<pid>` and when it was taken (ISO 8601 UTC). */
export interface RunClaim {
  by: string;
  at: string;
}

/** Whether two claims (null: none) are the same claim. */
export function sameClaim(a: RunClaim | null | undefined, b: RunClaim | null | undefined): boolean {
  if (!a || !b) return !a && !b;
  return a.by === b.by && a.at === b.at;
}

/** How long records are kept, per job or route and overall (`runs.retention_count`, `runs.retention_days`). */
export interface RunRetention {
  /** The newest this many runs of each job or route are kept. */
  count: number;
  /** Runs that started longer ago than this many days are removed. */
  days: number;
}

export const DEFAULT_RUN_RETENTION: RunRetention = { count: 200, days: 30 };

/** The earliest start that `retention` keeps at `now`: a run that started before it is too old. */
export function oldestKept(retention: RunRetention, now: Date): Date {
  return new Date(now.getTime() - retention.days * 86_400_000);
}

/** Whether `run`, finished or not, started before the age limit of `retention` at `now`. */
export function isTooOld(run: Pick<RunRecord, 'started_at'>, retention: RunRetention, now: Date): boolean {
  return Date.parse(run.started_at) < oldestKept(retention, now).getTime();
}

/** Newest first by start, then by id so that the order is total. */
export function newestFirst(a: RunRecord, b: RunRecord): number {
  return Date.parse(b.started_at) - Date.parse(a.started_at) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** A cron run's id in the run ledger: the job's id and the run's start (UTC, to the millisecond). */
export function cronRunId(jobId: string, startedAt: Date): string {
  return `${jobId}.${startedAt.toISOString().replace(/[-:.]/g, '')}`;
}

/** How long a run goes before its record shows it running (a run answering sooner is recorded once, answered). */
export const RUNNING_RECORD_AFTER_MS = 1000;
