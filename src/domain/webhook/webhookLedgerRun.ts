/** The run ledger's record of a webhook run, built from its run record. */
import type { RunRecord, RunStatus } from '../runs/RunRecord.js';
import type { WebhookRunRecord } from './webhookRunRecord.js';

/** The run ledger's words for where a webhook run stands. */
const LEDGER_STATUS: Readonly<Record<WebhookRunRecord['outcome'], RunStatus>> = {
  running: 'running',
  answered: 'running',
  delivered: 'ok',
  delivery_failed: 'delivery_failed',
  run_failed: 'error',
  not_run: 'blocked_config',
  abandoned: 'error',
};

/** The ledger id of attempt `attempt` of a webhook run its route retried (the last attempt keeps the event's id). */
export function attemptRunId(eventId: string, attempt: number): string {
  return `${eventId}~${attempt}`;
}

/**
 * The run ledger's record of an attempt of a webhook run that failed and was retried
 * (docs/runs.md, Retries): a record of its own, `error`, linked to the first attempt.
 */
export function failedAttemptRunOf(
  event: { id: string; route: string; event: string; deliveryId: string },
  attempt: number,
  prompt: string,
  error: string,
  startedAt: Date,
  now: Date,
): RunRecord {
  return {
    id: attemptRunId(event.id, attempt),
    kind: 'webhook',
    subject: event.route,
    name: event.route,
    slot: null,
    event: event.event,
    delivery_id: event.deliveryId,
    started_at: startedAt.toISOString(),
    finished_at: now.toISOString(),
    status: 'error',
    model: null,
    prompt,
    answer: null,
    error,
    deliveries: [],
    attempt,
    ...(attempt > 1 ? { retry_of: attemptRunId(event.id, 1) } : {}),
  };
}

/** The run ledger's record of a webhook run, from its run record. */
export function ledgerRunOf(record: WebhookRunRecord, model: string | null, messageIds: string[], now: Date): RunRecord {
  const status = LEDGER_STATUS[record.outcome];
  const ended = status !== 'running';
  const sent = record.outcome === 'delivered' || record.outcome === 'delivery_failed';
  return {
    id: record.eventId,
    kind: 'webhook',
    subject: record.route,
    name: record.route,
    slot: null,
    event: record.event,
    delivery_id: record.deliveryId,
    started_at: record.startedAt,
    finished_at: ended ? now.toISOString() : null,
    status,
    model,
    prompt: record.prompt,
    answer: record.answer,
    error: record.error,
    deliveries:
      sent && record.deliveredTo !== null
        ? [
            {
              target: record.deliveredTo,
              outcome: record.outcome === 'delivered' ? 'delivered' : 'failed',
              message_ids: record.outcome === 'delivered' ? messageIds : [],
              error: record.outcome === 'delivered' ? null : record.error,
            },
          ]
        : [],
    ...(record.attempt !== undefined ? { attempt: record.attempt } : {}),
    ...(record.retryOf !== undefined ? { retry_of: record.retryOf } : {}),
    ...(record.usage !== undefined || record.costUsd !== undefined
      ? { usage: record.usage ?? null, cost_usd: record.costUsd ?? null }
      : {}),
  };
}
