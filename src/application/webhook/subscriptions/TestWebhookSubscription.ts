import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../../domain/errorCodes.js';
import { InvalidWebhookError } from '../../../domain/errors.js';
import { subscriptionNotFound } from '../../../domain/webhook/WebhookSubscription.js';
import type { Clock } from '../../ports/Clock.js';
import type { ListenerResponse, LocalWebhookClient } from '../../ports/LocalWebhookClient.js';
import { TOKENS } from '../../ports/tokens.js';
import type { WebhookRoutes } from '../../ports/WebhookRoutes.js';
import type { WebhookSubscriptionRepository } from '../../ports/WebhookSubscriptionRepository.js';

export interface TestWebhookSubscriptionInput {
  name: string;
  /** The payload to send; a small sample when absent. */
  payload?: Record<string, unknown> | null;
  /** The event kind to send; `test` when absent. */
  event?: string | null;
}

export interface TestWebhookSubscriptionResult extends ListenerResponse {
  url: string;
  /** The event kind it was sent with. */
  event: string;
  payload: Record<string, unknown>;
}

/** The event kind a test delivery carries unless told otherwise. */
export const TEST_EVENT = 'test';

/**
 * `agent webhook test <name>`: signs a payload with the subscription's secret and
 * sends it with event `test`, or the kind asked for, to the listener configured on this machine,
 * as a sender would, and returns what the listener answered. Only for dynamic subscriptions:
 * the secrets of config.yaml routes are not this command's to use.
 */
@injectable()
export class TestWebhookSubscription {
  constructor(
    @inject(TOKENS.WebhookSubscriptionRepository) private readonly subscriptions: WebhookSubscriptionRepository,
    @inject(TOKENS.WebhookRoutes) private readonly routes: WebhookRoutes,
    @inject(TOKENS.LocalWebhookClient) private readonly client: LocalWebhookClient,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async execute(input: TestWebhookSubscriptionInput): Promise<TestWebhookSubscriptionResult> {
    if ((await this.routes.find(input.name))?.source === 'config') {
      throw new InvalidWebhookError(
        ERROR_CODES.WEBHOOK.CONFIG_ROUTE,
        `"agent webhook test" works only for dynamic subscriptions; "${input.name}" is a route of config.yaml, so send it a signed request from its sender instead.`,
      );
    }
    const { subscriptions } = await this.subscriptions.load();
    const subscription = subscriptions.find((each) => each.name === input.name);
    if (!subscription) throw subscriptionNotFound(input.name);
    const event = input.event ?? TEST_EVENT;
    const payload = input.payload ?? {
      event,
      subscription: subscription.name,
      message: 'A test delivery sent by "agent webhook test".',
      sent_at: this.clock.now().toISOString(),
    };
    const response = await this.client.send({ route: subscription.name, event, payload, secret: subscription.secret });
    return { ...response, url: this.client.urlOf(subscription.name), event, payload };
  }
}
