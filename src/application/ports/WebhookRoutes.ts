import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';

/**
 * The routes the listener serves right now: config.yaml's routes, then dynamic subscriptions
 * (a config route wins over a subscription of the same name). Subscriptions added, changed or
 * removed while the gateway runs are seen without a restart.
 */
export interface WebhookRoutes {
  /** The route with this name, or null. Cheap enough to call on every request. */
  find(name: string): Promise<WebhookRoute | null>;
  /** Every route served, config first, for the listening line. */
  all(): Promise<WebhookRoute[]>;
  /**
   * Every route, for `agent webhook list` and `agent webhook runs`: those served, config first,
   * and those of config.yaml that cannot be served, each with the reasons; when the
   * subscriptions cannot be read at all, the config routes and the reason.
   */
  listing(): Promise<WebhookRouteListing>;
}

/** What `listing()` finds. */
export interface WebhookRouteListing {
  /** The routes served, config.yaml's first. */
  routes: WebhookRoute[];
  /** Routes of config.yaml that are not served, each with one sentence per problem. */
  unusable: Array<{ name: string; problems: string[] }>;
  /** One sentence per stored subscription that cannot be read (it is not served). */
  subscriptionProblems: string[];
  /** Why no subscription could be read (a damaged or unreadable store), one sentence; null when they could. */
  storeProblem: string | null;
}
