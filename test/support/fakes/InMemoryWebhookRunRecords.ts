import type { WebhookRunRecords } from '../../../src/application/ports/WebhookRunRecords.js';
import { isFinalOutcome, type WebhookRunRecord } from '../../../src/domain/webhook/webhookRunRecord.js';

/** Webhook run records in memory, per route, each route keeping its newest `keep`. */
export class InMemoryWebhookRunRecords implements WebhookRunRecords {
  /** Every record as saved, in the order of the saves (for tests that follow a run's steps). */
  readonly saves: WebhookRunRecord[] = [];
  private readonly byRoute = new Map<string, WebhookRunRecord[]>();

  constructor(private readonly keep = 50) {}

  async find(route: string, eventId: string): Promise<WebhookRunRecord | null> {
    const record = this.byRoute.get(route)?.find((each) => each.eventId === eventId);
    return record ? structuredClone(record) : null;
  }

  /** Whether each save asked to be synced, in the order of the saves. */
  readonly synced: boolean[] = [];

  async save(record: WebhookRunRecord, synced = true): Promise<void> {
    this.saves.push(structuredClone(record));
    this.synced.push(synced);
    const records = this.byRoute.get(record.route) ?? [];
    const index = records.findIndex((each) => each.eventId === record.eventId);
    if (index >= 0) {
      records[index] = structuredClone(record);
      return;
    }
    // The oldest finished records beyond `keep` go; those of runs under way stay.
    const sorted = records.sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
    let surplus = Math.max(0, sorted.length - (this.keep - 1));
    const others = sorted.filter((each) => (isFinalOutcome(each.outcome) && surplus > 0 ? ((surplus -= 1), false) : true));
    this.byRoute.set(record.route, [...others, structuredClone(record)]);
  }

  async list(options: { route?: string | null; limit: number }): Promise<WebhookRunRecord[]> {
    const records = options.route ? (this.byRoute.get(options.route) ?? []) : [...this.byRoute.values()].flat();
    return records
      .map((record) => structuredClone(record))
      .sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt))
      .slice(0, Math.max(0, options.limit));
  }
}
