import type { WebhookRoutes } from '../../src/application/ports/WebhookRoutes.js';
import { DEFAULT_WEBHOOK_TOOLSETS, type WebhookRoute } from '../../src/domain/webhook/WebhookRoute.js';

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
    deliver: 'log',
    deliverExtra: {},
    filters: [],
    ...overrides,
  };
}

/** Routes a test sets directly; config routes first, as the port promises. */
export class FakeWebhookRoutes implements WebhookRoutes {
  readonly routes = new Map<string, WebhookRoute>();

  constructor(routes: readonly WebhookRoute[] = []) {
    for (const route of routes) this.set(route);
  }

  set(route: WebhookRoute): this {
    this.routes.set(route.name, route);
    return this;
  }

  async find(name: string): Promise<WebhookRoute | null> {
    return this.routes.get(name) ?? null;
  }

  async all(): Promise<WebhookRoute[]> {
    const routes = [...this.routes.values()];
    return [...routes.filter((route) => route.source === 'config'), ...routes.filter((route) => route.source !== 'config')];
  }
}
