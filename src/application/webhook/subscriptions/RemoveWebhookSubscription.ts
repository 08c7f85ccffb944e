import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../../domain/errorCodes.js';
import { InvalidWebhookError } from '../../../domain/errors.js';
import { subscriptionNotFound, type WebhookSubscription } from '../../../domain/webhook/WebhookSubscription.js';
import { TOKENS } from '../../ports/tokens.js';
import type { WebhookRoutes } from '../../ports/WebhookRoutes.js';
import type { WebhookSubscriptionRepository } from '../../ports/WebhookSubscriptionRepository.js';

/** `agent webhook remove <name>`: deletes a dynamic subscription; a running listener stops serving it at once. */
@injectable()
export class RemoveWebhookSubscription {
  constructor(
    @inject(TOKENS.WebhookSubscriptionRepository) private readonly subscriptions: WebhookSubscriptionRepository,
    @inject(TOKENS.WebhookRoutes) private readonly routes: WebhookRoutes,
  ) {}

  /** Returns the removed subscription. Throws WEBHOOK.CONFIG_ROUTE for a config.yaml route, WEBHOOK.NOT_FOUND for no such subscription. */
  async execute(input: { name: string }): Promise<WebhookSubscription> {
    if ((await this.routes.find(input.name))?.source === 'config') {
      throw new InvalidWebhookError(
        ERROR_CODES.WEBHOOK.CONFIG_ROUTE,
        `"${input.name}" is a route of config.yaml, not a subscription; remove it from platforms.webhook.extra.routes there.`,
      );
    }
    return this.subscriptions.update(input.name, (current) => {
      if (current === null) throw subscriptionNotFound(input.name);
      return { next: null, result: current };
    });
  }
}
