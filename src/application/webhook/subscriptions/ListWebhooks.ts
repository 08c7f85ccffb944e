import { inject, injectable } from 'inversify';
import { TOKENS } from '../../ports/tokens.js';
import type { WebhookRouteListing, WebhookRoutes } from '../../ports/WebhookRoutes.js';

/**
 * `agent webhook list`: every route served now, config.yaml routes first, then subscriptions,
 * and the routes that cannot be served with the reasons. Throws SubscriptionStoreError when the
 * subscriptions cannot be read.
 */
@injectable()
export class ListWebhooks {
  constructor(@inject(TOKENS.WebhookRoutes) private readonly routes: WebhookRoutes) {}

  async execute(): Promise<WebhookRouteListing> {
    return this.routes.listing();
  }
}
