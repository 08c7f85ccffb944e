import type { EventOutbox, FailedEvent, OutboxEntry } from '../../application/ports/EventOutbox.js';
import type { OutboundEvent } from '../../domain/events/outboundEvents.js';
import type { PostgresDatabase, PreparedStatement } from './PostgresDatabase.js';

interface OutboxRow {
  subscription: string;
  event: string;
  created_at: Date;
  attempts: number;
  last_error: string | null;
  failed_at: Date | null;
}

/**
 * The due rows, oldest first, claimed in one statement: rows another replica's claim is taking
 * right now are skipped (`FOR UPDATE SKIP LOCKED`), not waited for, and a claimed row is not due
 * again before `claimed_until`. So each event is sent by one replica at a time; one whose sender
 * died is sent again once its claim ran out.
 */
const CLAIM_DUE: PreparedStatement = {
  name: 'agent_event_outbox_claim_due',
  text: `UPDATE agent_event_outbox AS row SET claimed_until = $2
         FROM (SELECT subscription, event_id FROM agent_event_outbox
               WHERE failed_at IS NULL AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
               ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED) AS due
         WHERE row.subscription = due.subscription AND row.event_id = due.event_id
         RETURNING row.subscription, row.event, row.created_at, row.attempts, row.last_error, row.failed_at`,
};

/**
 * The events out in `agent_event_outbox` (the migration 'event outbox'), shared by every gateway
 * on the database: one statement per intent, each committed before it resolves. Times are the
 * callers' clocks (the gateways'), as everywhere the store compares a time it was given.
 */
export class PostgresEventOutbox implements EventOutbox {
  constructor(private readonly database: PostgresDatabase) {}

  async add(entries: readonly { subscription: string; event: OutboundEvent }[], now: Date): Promise<void> {
    if (entries.length === 0) return;
    await this.database.query(
      `INSERT INTO agent_event_outbox (subscription, event_id, event, created_at, next_attempt_at)
       SELECT subscription, event_id, event, $4, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS added (subscription, event_id, event)
       ON CONFLICT (subscription, event_id) DO NOTHING`,
      [
        entries.map((entry) => entry.subscription),
        entries.map((entry) => entry.event.id),
        entries.map((entry) => JSON.stringify(entry.event)),
        now,
      ],
    );
  }

  async claimDue(now: Date, limit: number, leaseMs: number): Promise<OutboxEntry[]> {
    const rows = await this.database.query<OutboxRow>(CLAIM_DUE, [now, new Date(now.getTime() + leaseMs), limit]);
    return rows
      .map((row) => ({
        subscription: row.subscription,
        event: JSON.parse(row.event) as OutboundEvent,
        createdAt: row.created_at,
        attempts: row.attempts,
        lastError: row.last_error,
      }))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  }

  async sent(subscription: string, eventId: string): Promise<void> {
    await this.database.query('DELETE FROM agent_event_outbox WHERE subscription = $1 AND event_id = $2 AND failed_at IS NULL', [
      subscription,
      eventId,
    ]);
  }

  async retryAt(subscription: string, eventId: string, next: Date, error: string): Promise<void> {
    await this.database.query(
      `UPDATE agent_event_outbox SET attempts = attempts + 1, last_error = $3, next_attempt_at = $4, claimed_until = NULL
       WHERE subscription = $1 AND event_id = $2 AND failed_at IS NULL`,
      [subscription, eventId, error, next],
    );
  }

  async giveUp(subscription: string, eventId: string, error: string, at: Date): Promise<void> {
    await this.database.query(
      `UPDATE agent_event_outbox SET attempts = attempts + 1, last_error = $3, failed_at = $4, claimed_until = NULL
       WHERE subscription = $1 AND event_id = $2 AND failed_at IS NULL`,
      [subscription, eventId, error, at],
    );
  }

  async failed(limit: number): Promise<FailedEvent[]> {
    const rows = await this.database.query<OutboxRow>(
      `SELECT subscription, event, created_at, attempts, last_error, failed_at FROM agent_event_outbox
       WHERE failed_at IS NOT NULL ORDER BY failed_at DESC, event_id LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({
      subscription: row.subscription,
      event: JSON.parse(row.event) as OutboundEvent,
      createdAt: row.created_at,
      failedAt: row.failed_at ?? row.created_at,
      attempts: row.attempts,
      error: row.last_error ?? 'unknown',
    }));
  }

  async resend(subscription: string, eventId: string, now: Date): Promise<boolean> {
    const rows = await this.database.query<{ event_id: string }>(
      `UPDATE agent_event_outbox SET failed_at = NULL, attempts = 0, created_at = $3, next_attempt_at = $3, claimed_until = NULL
       WHERE subscription = $1 AND event_id = $2 AND failed_at IS NOT NULL RETURNING event_id`,
      [subscription, eventId, now],
    );
    return rows.length > 0;
  }

  async failedCount(): Promise<number> {
    const [row] = await this.database.query<{ count: string }>(
      'SELECT count(*) AS count FROM agent_event_outbox WHERE failed_at IS NOT NULL',
    );
    return Number(row?.count ?? 0);
  }
}
