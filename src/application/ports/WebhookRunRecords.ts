import type { WebhookRunRecord } from '../../domain/webhook/webhookRunRecord.js';

/**
 * The record every webhook run leaves (docs/webhooks.md), one per accepted event, kept per route.
 * Promises:
 * - `save` replaces the event's record if there is one (a run goes from `running` to `answered`
 *   to its outcome in one record), and resolves once the record would survive a crash (a
 *   synced save, a power cut too): the answer saved before a delivery is there after a restart;
 * - each route keeps its newest `output_retention` records; the one just saved always survives;
 * - reading never creates or changes anything, so it works in a home this user cannot write.
 */
export interface WebhookRunRecords {
  /**
   * The record of the event `eventId` on `route`, or null when there is none. `receivedAt`, the
   * event's, lets a store that names records after it look there instead of searching.
   */
  find(route: string, eventId: string, receivedAt?: string): Promise<WebhookRunRecord | null>;
  /**
   * Writes the record of `record.eventId`, replacing an earlier one of the same event. With
   * `synced` false it resolves without waiting for the disk: a crash of the process still leaves
   * the old record or the new one, a power cut may leave the old (for records that only show
   * progress; the answer is saved synced).
   */
  save(record: WebhookRunRecord, synced?: boolean): Promise<void>;
  /**
   * The newest `limit` records, newest first by start time: of `route` when given, else of
   * every route. Records that cannot be read are left out. Empty when there are none.
   */
  list(options: { route?: string | null; limit: number }): Promise<WebhookRunRecord[]>;
}
