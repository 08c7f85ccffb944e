/**
 * Run events out (docs/events.md): what the service tells an `events_out` subscription, as
 * Standard Webhooks messages, and which of them each subscription receives.
 */
import { isFailedStatus, type LastStatus } from '../RunOutcome.js';
import type { RunRecord } from '../runs/RunRecord.js';

/** Every event a subscription may ask for, in the order they happen. */
export const EVENT_TYPES = ['run.started', 'run.finished', 'run.failed', 'delivery.failed', 'job.paused'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The type of the sample `agent events test` sends: no subscription asks for it, every one gets it. */
export const TEST_EVENT_TYPE = 'event.test';

/** Whether `name` is one of EVENT_TYPES. */
export function isEventType(name: string): name is EventType {
  return (EVENT_TYPES as readonly string[]).includes(name);
}

/** Who an event is about: a cron job (by id and name) or a webhook route. */
export type EventSubject = { kind: 'cron'; jobId: string; jobName: string } | { kind: 'webhook'; route: string };

/**
 * One message, as it is sent: `id` is its `webhook-id`, the same at every attempt; the body is
 * `{"type", "timestamp", "data"}` (Standard Webhooks' recommended shape).
 */
export interface OutboundEvent {
  id: string;
  type: EventType | typeof TEST_EVENT_TYPE;
  /** ISO 8601 UTC: when what the event tells happened. */
  timestamp: string;
  data: Record<string, unknown>;
  subject: EventSubject | null;
}

/** The JSON body of `event`, as signed and sent. */
export function eventBody(event: OutboundEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}

/** One `events_out.<name>` of config.yaml. */
export interface EventSubscription {
  name: string;
  url: string;
  /** The HMAC key: the bytes a `whsec_<base64>` secret decodes to, or a plain secret's UTF-8 bytes. */
  key: Uint8Array;
  events: readonly EventType[];
  /** Job ids or names whose events it receives; null: every job's. */
  jobs: readonly string[] | null;
  /** Webhook routes whose runs' events it receives; null: every route's. */
  routes: readonly string[] | null;
  /** The wait before the first retry; each next one doubles, up to RETRY_CAP_MS. */
  firstRetryMs: number;
}

/** Whether `subscription` receives `event`. */
export function wants(subscription: EventSubscription, event: OutboundEvent): boolean {
  if (event.type === TEST_EVENT_TYPE) return true;
  if (!subscription.events.includes(event.type)) return false;
  const subject = event.subject;
  if (subject === null) return true;
  if (subject.kind === 'cron')
    return subscription.jobs === null || subscription.jobs.some((job) => job === subject.jobId || job === subject.jobName);
  return subscription.routes === null || subscription.routes.includes(subject.route);
}

/** The run record as events carry it: its fields as the ledger keeps them (a transcript is never part of it). */
function runData(run: RunRecord): Record<string, unknown> {
  const { redelivery_claim: _claim, claimant: _claimant, ...shown } = run;
  return { ...shown };
}

function subjectOfRun(run: RunRecord): EventSubject {
  return run.kind === 'cron' ? { kind: 'cron', jobId: run.subject, jobName: run.name } : { kind: 'webhook', route: run.subject };
}

/** The id of a run's event of `type`: the same however often the run is saved, so an event is kept once. */
function runEventId(run: RunRecord, type: EventType): string {
  return `msg_${run.kind}_${run.id}_${type.replace('.', '_')}`;
}

/** `run.started` of a run that starts. */
export function runStartedEvent(run: RunRecord): OutboundEvent {
  return {
    id: runEventId(run, 'run.started'),
    type: 'run.started',
    timestamp: run.started_at,
    data: runData(run),
    subject: subjectOfRun(run),
  };
}

/**
 * The events a saved record tells: none while it runs (or waits for its delivery) or for a
 * skipped slot; once it ended, `run.failed` for a failed status (`error`, `delivery_failed`,
 * `blocked_config`) and `run.finished` for any other, and `delivery.failed` when one of its
 * deliveries failed.
 */
export function eventsOfSavedRun(run: RunRecord): OutboundEvent[] {
  if (run.status === 'running' || run.status === 'skipped' || run.delivery_pending === true) return [];
  const at = run.finished_at ?? run.started_at;
  const ended: EventType = isFailedStatus(run.status as LastStatus) ? 'run.failed' : 'run.finished';
  const types: EventType[] = [ended];
  if (run.deliveries.some((delivery) => delivery.outcome === 'failed')) types.push('delivery.failed');
  return types.map((type) => ({ id: runEventId(run, type), type, timestamp: at, data: runData(run), subject: subjectOfRun(run) }));
}

/** `job.paused`: by hand (`agent cron pause`, the job tool) or after failed runs. */
export function jobPausedEvent(job: { id: string; name: string }, pausedAt: string, reason: string | null): OutboundEvent {
  return {
    id: `msg_job_${job.id}_paused_${Date.parse(pausedAt)}`,
    type: 'job.paused',
    timestamp: pausedAt,
    data: { job_id: job.id, name: job.name, paused_at: pausedAt, reason },
    subject: { kind: 'cron', jobId: job.id, jobName: job.name },
  };
}

/** Retries stop this long after an event was first due: it is undeliverable then. */
export const GIVE_UP_AFTER_MS = 24 * 3_600_000;
/** The longest wait between two attempts. */
export const RETRY_CAP_MS = 3_600_000;
/** The default wait before the first retry (`first_retry_seconds`). */
export const DEFAULT_FIRST_RETRY_MS = 10_000;

/**
 * When to try again after `attempts` failed attempts of an event first due at `createdAt`:
 * `firstRetryMs`, doubling each time up to RETRY_CAP_MS; null once that is past GIVE_UP_AFTER_MS.
 */
export function nextAttemptAt(createdAt: Date, attempts: number, now: Date, firstRetryMs: number): Date | null {
  const wait = Math.min(firstRetryMs * 2 ** Math.max(0, attempts - 1), RETRY_CAP_MS);
  const next = now.getTime() + wait;
  return next > createdAt.getTime() + GIVE_UP_AFTER_MS ? null : new Date(next);
}

/** What a receiver's answer means: sent, worth another try, or refused for good. */
export type AnswerVerdict = 'sent' | 'retry' | 'refused';

/**
 * 2xx: sent. 408, 425, 429 and 5xx (and no answer at all): tried again. Any other 4xx: the
 * receiver refused this message, and the same bytes would be refused again: undeliverable at once.
 */
export function verdictOf(status: number | null): AnswerVerdict {
  if (status === null) return 'retry';
  if (status >= 200 && status < 300) return 'sent';
  if (status >= 400 && status < 500 && status !== 408 && status !== 425 && status !== 429) return 'refused';
  return 'retry';
}
