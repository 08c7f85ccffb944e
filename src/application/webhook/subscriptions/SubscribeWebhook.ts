import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../../domain/errorCodes.js';
import { InvalidWebhookError } from '../../../domain/errors.js';
import {
  checkSubscriptionName,
  defineSubscription,
  type SubscriptionOptions,
  type WebhookSubscription,
} from '../../../domain/webhook/WebhookSubscription.js';
import type { Clock } from '../../ports/Clock.js';
import type { SecretGenerator } from '../../ports/SecretGenerator.js';
import { TOKENS } from '../../ports/tokens.js';
import type { WebhookRoutes } from '../../ports/WebhookRoutes.js';
import type { WebhookSubscriptionRepository } from '../../ports/WebhookSubscriptionRepository.js';

export interface SubscribeWebhookInput extends SubscriptionOptions {
  name: string;
}

export interface SubscribeWebhookResult {
  subscription: WebhookSubscription;
  /** False when a subscription of this name was replaced. */
  created: boolean;
}

/**
 * `agent webhook subscribe` (docs/webhooks.md): creates or replaces the dynamic subscription
 * `name`, reachable at `/webhooks/<name>` as soon as it is stored. Its secret is generated
 * unless given, and kept when the subscription is replaced without a new one. A name that
 * config.yaml already uses is refused: the config route would win.
 */
@injectable()
export class SubscribeWebhook {
  constructor(
    @inject(TOKENS.WebhookSubscriptionRepository) private readonly subscriptions: WebhookSubscriptionRepository,
    @inject(TOKENS.WebhookRoutes) private readonly routes: WebhookRoutes,
    @inject(TOKENS.SecretGenerator) private readonly secrets: SecretGenerator,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async execute(input: SubscribeWebhookInput): Promise<SubscribeWebhookResult> {
    const { name, ...options } = input;
    checkSubscriptionName(name);
    if ((await this.routes.find(name))?.source === 'config') {
      throw new InvalidWebhookError(
        ERROR_CODES.WEBHOOK.NAME_TAKEN,
        `A route named "${name}" is defined in config.yaml and would win over a subscription of that name; choose another name.`,
      );
    }
    return this.subscriptions.update(name, (current) => {
      const subscription = defineSubscription(name, options, current, this.clock.now(), () => this.secrets.webhookSecret());
      return { next: subscription, result: { subscription, created: current === null } };
    });
  }
}
