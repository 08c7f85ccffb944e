import type { WebhookBacklog } from '../../application/ports/WebhookBacklog.js';
import type { PostgresDatabase } from './PostgresDatabase.js';

/**
 * Counts the webhook events waiting in the database's shared inbox (PostgresWebhookInbox), claimed
 * ones included: one read, no lock taken and nothing written, so it works beside running
 * gateways. A failure is the DatabaseUnavailableError of PostgresDatabase, naming the database.
 */
export class PostgresWebhookBacklog implements WebhookBacklog {
  constructor(private readonly database: PostgresDatabase) {}

  async waiting(): Promise<number> {
    const [row] = await this.database.query<{ count: number }>('SELECT count(*)::int AS count FROM agent_webhook_events');
    return row?.count ?? 0;
  }
}
