import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';

/**
 * The routes the listener serves right now: config.yaml's routes, then dynamic subscriptions
 * (a config route wins over a subscription of the same name). Subscriptions added, changed or
 * removed while the gateway runs are seen without a restart.
 */
export interface WebhookRoutes {
  /** The route with this name, or null. Cheap enough to call on every request. */
  find(name: string): Promise<WebhookRoute | null>;
  /** Every route, config first, for the listening line and `agent webhook list`. */
  all(): Promise<WebhookRoute[]>;
}
