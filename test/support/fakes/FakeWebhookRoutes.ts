import type { WebhookRouteListing, WebhookRoutes } from '../../../src/application/ports/WebhookRoutes.js';
import type { WebhookSubscriptionRepository } from '../../../src/application/ports/WebhookSubscriptionRepository.js';
import { DEFAULT_WEBHOOK_TOOLSETS, type WebhookRoute } from '../../../src/domain/webhook/WebhookRoute.js';
import { subscriptionRoute } from '../../../src/domain/webhook/WebhookSubscription.js';

/** A route as config.yaml would give it: secret `s3cret`, every event, delivery `log`; `overrides` replace fields. */
export function aRoute(name: string, overrides: Partial<WebhookRoute> = {}): WebhookRoute {
  return {
    name,
    source: 'config',
    secrets: { kind: 'secrets', values: ['s3cret'] },
    events: [],
    prompt: null,
    skills: [],
    toolsets: DEFAULT_WEBHOOK_TOOLSETS,
    allowPrivateNetworks: false,
    deliverOnly: false,
    deliver: 'log',
    deliverExtra: {},
    filters: [],
    ...overrides,
  };
}

/**
 * Routes a test sets directly, then the subscriptions of `subscriptions` when given; a route
 * set directly wins over a subscription of its name, and comes first, as the port promises.
 */
export class FakeWebhookRoutes implements WebhookRoutes {
  readonly routes = new Map<string, WebhookRoute>();

  constructor(
    routes: readonly WebhookRoute[] = [],
    private readonly subscriptions?: WebhookSubscriptionRepository,
  ) {
    for (const route of routes) this.set(route);
  }

  set(route: WebhookRoute): this {
    this.routes.set(route.name, route);
    return this;
  }

  async find(name: string): Promise<WebhookRoute | null> {
    return (await this.all()).find((route) => route.name === name) ?? null;
  }

  /** Config routes that cannot be served, as a test sets them. */
  readonly unusable: Array<{ name: string; problems: string[] }> = [];

  async listing(): Promise<WebhookRouteListing> {
    const subscriptionProblems = this.subscriptions ? (await this.subscriptions.load()).problems : [];
    return { routes: await this.all(), unusable: [...this.unusable], subscriptionProblems, storeProblem: null };
  }

  async all(): Promise<WebhookRoute[]> {
    const routes = [...this.routes.values()];
    const subscribed = this.subscriptions ? (await this.subscriptions.load()).subscriptions.map(subscriptionRoute) : [];
    return [...routes, ...subscribed.filter((route) => !this.routes.has(route.name))];
  }
}
