import { inject, injectable } from 'inversify';
import type { WebhookRunRecord } from '../../domain/webhook/webhookRunRecord.js';
import { TOKENS } from '../ports/tokens.js';
import type { WebhookRunRecords } from '../ports/WebhookRunRecords.js';

export interface ListWebhookRunsInput {
  /** Only this route's runs; every route's when absent. */
  route?: string | null;
  /** How many runs at most, newest first. */
  limit: number;
}

/** `agent webhook runs [<route>]`: the recent webhook runs from their records, newest first. Reads only. */
@injectable()
export class ListWebhookRuns {
  constructor(@inject(TOKENS.WebhookRunRecords) private readonly records: WebhookRunRecords) {}

  execute(input: ListWebhookRunsInput): Promise<WebhookRunRecord[]> {
    return this.records.list({ route: input.route ?? null, limit: input.limit });
  }
}
