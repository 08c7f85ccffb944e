import type { WebhookRunRecords } from '../../application/ports/WebhookRunRecords.js';
import {
  FINAL_OUTCOMES,
  WEBHOOK_RUN_OUTCOMES,
  type WebhookRunOutcome,
  type WebhookRunRecord,
} from '../../domain/webhook/webhookRunRecord.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import { jsonbText } from './jsonbText.js';
import type { RunUsage } from '../../domain/runs/usage.js';
import type { PostgresDatabase } from './PostgresDatabase.js';

interface RecordRow {
  record: unknown;
}

/** The stored form of a record: the fields `agent webhook runs --json` shows, by the same names. */
function storedRecordOf(record: WebhookRunRecord): Record<string, unknown> {
  return {
    event_id: record.eventId,
    route: record.route,
    event: record.event,
    delivery_id: record.deliveryId,
    received_at: record.receivedAt,
    started_at: record.startedAt,
    outcome: record.outcome,
    delivered_to: record.deliveredTo,
    ...(record.agent ? { agent: record.agent } : {}),
    ...(record.usage ? { usage: record.usage } : {}),
    ...(record.costUsd != null ? { cost_usd: record.costUsd } : {}),
    ...(record.coalesced ? { coalesced: record.coalesced } : {}),
    prompt: record.prompt,
    answer: record.answer,
    error: record.error,
  };
}

const isText = (value: unknown): value is string => typeof value === 'string';
const isTextOrNull = (value: unknown): value is string | null => value === null || typeof value === 'string';
const isOutcome = (value: unknown): value is WebhookRunOutcome => (WEBHOOK_RUN_OUTCOMES as readonly unknown[]).includes(value);

/** A stored record read back, or null when it is not one this version understands. */
function readStoredRecord(value: unknown): WebhookRunRecord | null {
  if (!isJsonObject(value)) return null;
  const { event_id: eventId, route, event, delivery_id: deliveryId, received_at: receivedAt, started_at: startedAt, outcome } = value;
  const { delivered_to: deliveredTo = null, prompt = null, answer = null, error = null } = value;
  if (!isText(eventId) || !isText(route) || !isText(event) || !isText(deliveryId) || !isText(receivedAt) || !isText(startedAt)) return null;
  if (!isOutcome(outcome) || !isTextOrNull(deliveredTo) || !isTextOrNull(prompt) || !isTextOrNull(answer) || !isTextOrNull(error))
    return null;
  const agent = typeof value.agent === 'string' ? { agent: value.agent } : {};
  const usage = isJsonObject(value.usage) ? { usage: value.usage as unknown as RunUsage } : {};
  const cost = typeof value.cost_usd === 'number' ? { costUsd: value.cost_usd } : {};
  const coalesced = Array.isArray(value.coalesced) && value.coalesced.every(isText) ? { coalesced: value.coalesced } : {};
  return {
    eventId,
    route,
    event,
    deliveryId,
    receivedAt,
    startedAt,
    outcome,
    deliveredTo,
    prompt,
    answer,
    error,
    ...agent,
    ...usage,
    ...cost,
    ...coalesced,
  };
}

const readRows = (rows: readonly RecordRow[]): WebhookRunRecord[] =>
  rows.map((row) => readStoredRecord(row.record)).filter((record) => record !== null);

/**
 * Webhook run records in PostgreSQL (docs/scaling.md), one row per route and event in
 * `agent_webhook_runs`, holding the record (the fields `agent webhook runs --json` shows) and its
 * start time to order by, so that every gateway sharing the database sees every run. A save is
 * one transaction: the record is written over the event's earlier one, and the first save of an
 * event deletes the route's oldest records beyond the newest `retention` (the one just saved is
 * never among them; `retention` below 1 counts as 1). A synced save resolves once the commit is
 * durable; an unsynced one commits without waiting for the server's disk (`synchronous_commit`
 * off for that transaction): a crash of the server may lose it, never half of it. Reads never
 * write. A failure is the database's DatabaseUnavailableError, naming the database.
 */
export class PostgresWebhookRunRecords implements WebhookRunRecords {
  private readonly retention: () => number;

  /**
   * `retention`: the records kept per route, `platforms.webhook.extra.output_retention`
   * (webhookOutputRetention); a function is asked at every save.
   */
  constructor(
    private readonly database: PostgresDatabase,
    retention: number | (() => number),
  ) {
    this.retention = typeof retention === 'function' ? retention : () => retention;
  }

  async find(route: string, eventId: string): Promise<WebhookRunRecord | null> {
    const rows = await this.database.query<RecordRow>('SELECT record FROM agent_webhook_runs WHERE route = $1 AND event_id = $2', [
      route,
      eventId,
    ]);
    return readRows(rows)[0] ?? null;
  }

  async save(record: WebhookRunRecord, synced = true): Promise<void> {
    const keep = Math.max(1, Math.floor(this.retention()));
    await this.database.transaction(async (tx) => {
      if (!synced) await tx.query('SET LOCAL synchronous_commit = off');
      const [written] = await tx.query<{ inserted: boolean }>(
        `INSERT INTO agent_webhook_runs (route, event_id, started_at, record) VALUES ($1, $2, $3, $4)
         ON CONFLICT (route, event_id) DO UPDATE SET started_at = EXCLUDED.started_at, record = EXCLUDED.record
         RETURNING (xmax = 0) AS inserted`,
        [record.route, record.eventId, record.startedAt, jsonbText(storedRecordOf(record))],
      );
      if (!written?.inserted) return;
      await tx.query(
        // Only finished runs go: a run under way reads its record back to deliver its answer.
        `DELETE FROM agent_webhook_runs WHERE route = $1 AND event_id <> $2
           AND record->>'outcome' = ANY($4::text[]) AND event_id NOT IN (
           SELECT event_id FROM agent_webhook_runs WHERE route = $1 AND event_id <> $2
           ORDER BY started_at DESC, event_id DESC LIMIT $3)`,
        [record.route, record.eventId, keep - 1, FINAL_OUTCOMES],
      );
    });
  }

  async list(options: { route?: string | null; limit: number }): Promise<WebhookRunRecord[]> {
    const limit = Math.max(0, Math.floor(options.limit));
    if (limit === 0) return [];
    const rows = options.route
      ? await this.database.query<RecordRow>(
          'SELECT record FROM agent_webhook_runs WHERE route = $1 ORDER BY started_at DESC, event_id DESC LIMIT $2',
          [options.route, limit],
        )
      : await this.database.query<RecordRow>('SELECT record FROM agent_webhook_runs ORDER BY started_at DESC, event_id DESC LIMIT $1', [
          limit,
        ]);
    return readRows(rows);
  }
}
