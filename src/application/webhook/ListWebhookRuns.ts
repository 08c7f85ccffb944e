import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { WebhookError } from '../../domain/errors.js';
import type { WebhookRunRecord } from '../../domain/webhook/webhookRunRecord.js';
import { TOKENS } from '../ports/tokens.js';
import type { WebhookRoutes } from '../ports/WebhookRoutes.js';
import type { WebhookRunRecords } from '../ports/WebhookRunRecords.js';
import type { RunLedger } from '../ports/RunLedger.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';

/** A webhook run as listed: its run record, and its entry in the run ledger when there is one. */
export type ListedWebhookRun = WebhookRunRecord & { ledger: RunRecord | null };

export interface ListWebhookRunsInput {
  /** Only this route's runs; every route's when absent. */
  route?: string | null;
  /** How many runs at most, newest first. */
  limit: number;
}

/**
 * `agent webhook runs [<route>]`: the recent webhook runs from their records, each with its entry
 * in the run ledger (status, model, deliveries), newest first. Reads
 * only. A route that has no runs and that no route of config.yaml nor any subscription is named
 * (usually a typo) is WEBHOOK.ROUTE_NOT_FOUND, naming the routes there are; a route removed since
 * keeps showing the runs it had.
 */
@injectable()
export class ListWebhookRuns {
  constructor(
    @inject(TOKENS.WebhookRunRecords) private readonly records: WebhookRunRecords,
    @inject(TOKENS.WebhookRoutes) private readonly routes: WebhookRoutes,
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
  ) {}

  async execute(input: ListWebhookRunsInput): Promise<ListedWebhookRun[]> {
    const route = input.route ?? null;
    const records = await this.records.list({ route, limit: input.limit });
    const runs = await this.withLedger(records, input.limit);
    if (route === null || runs.length > 0) return runs;
    const listing = await this.routes.listing();
    const names = [...listing.routes.map((each) => each.name), ...listing.unusable.map((each) => each.name)];
    if (names.includes(route)) return runs;
    if (listing.storeProblem !== null) {
      // It may be a subscription of the store that cannot be read: say that, not that it does not exist.
      const problem = listing.storeProblem.charAt(0).toLowerCase() + listing.storeProblem.slice(1);
      throw new WebhookError(
        ERROR_CODES.WEBHOOK.SUBSCRIPTIONS_DAMAGED,
        `No run was recorded for the route "${route}", and whether it is a subscription cannot be told: ${problem}`,
      );
    }
    const there =
      names.length === 0
        ? 'there is no route yet (add one with "agent webhook subscribe <name>")'
        : `the routes are ${names.join(', ')} (see "agent webhook list")`;
    throw new WebhookError(
      ERROR_CODES.WEBHOOK.ROUTE_NOT_FOUND,
      `No webhook route is named "${route}" and no run was recorded under that name; ${there}.`,
    );
  }

  /** Each record with the run ledger's entry of its event (the newest `limit` of its route), or null. */
  private async withLedger(records: WebhookRunRecord[], limit: number): Promise<ListedWebhookRun[]> {
    const routes = [...new Set(records.map((record) => record.route))];
    const ledgered = await Promise.all(routes.map((route) => this.ledger.list({ kind: 'webhook', subject: route, limit })));
    const byEvent = new Map(ledgered.flat().map((run) => [`${run.subject}\n${run.id}`, run]));
    return records.map((record) => ({ ...record, ledger: byEvent.get(`${record.route}\n${record.eventId}`) ?? null }));
  }
}
