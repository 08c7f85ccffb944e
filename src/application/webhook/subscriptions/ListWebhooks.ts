import { inject, injectable } from 'inversify';
import type { WebhookRoute } from '../../../domain/webhook/WebhookRoute.js';
import { TOKENS } from '../../ports/tokens.js';
import type { WebhookRoutes } from '../../ports/WebhookRoutes.js';

/** `agent webhook list`: every route served now, config.yaml routes first, then subscriptions. */
@injectable()
export class ListWebhooks {
  constructor(@inject(TOKENS.WebhookRoutes) private readonly routes: WebhookRoutes) {}

  async execute(): Promise<WebhookRoute[]> {
    return this.routes.all();
  }
}
