import { inject, injectable } from 'inversify';
import { errorText } from '../../domain/errors.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import { subscriptionRoute } from '../../domain/webhook/WebhookSubscription.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { WebhookRouteListing, WebhookRoutes } from '../../application/ports/WebhookRoutes.js';
import {
  SubscriptionStoreError,
  type SubscriptionSnapshot,
  type WebhookSubscriptionRepository,
} from '../../application/ports/WebhookSubscriptionRepository.js';
import { displayPath } from '../shared/displayPath.js';
import type { AgentConfig } from './AgentConfig.js';
import { CONFIG_TOKENS } from './tokens.js';
import { enabledMcpServers } from './mcpServerConfig.js';
import { readConfiguredRoutes, type ConfiguredRoutes } from './webhookRouteConfig.js';
import { isLoopbackHost, webhookExtra, webhookListenerAddress } from './webhookSettings.js';

/**
 * The routes the listener serves: those of config.yaml (`platforms.webhook.extra.routes`), read
 * and checked once, then the dynamic subscriptions, looked up in the subscription store on every
 * call — which costs one `stat` while the file is unchanged — so subscriptions added, changed or
 * removed are served without a restart. A config route wins over a subscription of its name,
 * even when the config route is unusable.
 *
 * The gateway's start-up check reads `report()`: a config route without a secret, or with
 * `INSECURE_NO_AUTH` on a listener that is not bound to a loopback address, stops it there.
 */
@injectable()
export class ConfiguredWebhookRoutes implements WebhookRoutes {
  private readonly configured: ConfiguredRoutes;
  /** The last store problem logged, so that a broken file is reported once, not on every request. */
  private reported: string | null = null;
  private reportedSnapshot: SubscriptionSnapshot | null = null;

  constructor(
    @inject(CONFIG_TOKENS.AgentConfig) config: AgentConfig,
    @inject(TOKENS.AgentPaths) paths: AgentPaths,
    @inject(TOKENS.WebhookSubscriptionRepository) private readonly subscriptions: WebhookSubscriptionRepository,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {
    const configFile = displayPath(paths.configFile);
    const listener = webhookListenerAddress(config);
    this.configured = readConfiguredRoutes(webhookExtra(config), isLoopbackHost(listener.host), configFile, enabledMcpServers(config));
  }

  /**
   * What is wrong with the config routes, for the gateway's start-up check (which `agent config
   * check` runs too): the routes that cannot be served, each with one sentence per problem naming
   * it, and one sentence per key ignored. Logs nothing.
   */
  report(): Pick<ConfiguredRoutes, 'problems' | 'unusable' | 'warnings'> {
    const { problems, unusable, warnings } = this.configured;
    return { problems, unusable, warnings };
  }

  async find(name: string): Promise<WebhookRoute | null> {
    if (this.configured.names.includes(name)) return this.configured.routes.find((route) => route.name === name) ?? null;
    // A name not found may be a subscription made a moment ago by another process, which a
    // store's cache has not heard of yet: it is looked up afresh before the answer is no.
    const subscription =
      (await this.loadSubscriptions()).find((each) => each.name === name) ??
      (await this.loadSubscriptions(true)).find((each) => each.name === name);
    return subscription ? subscriptionRoute(subscription) : null;
  }

  async all(): Promise<WebhookRoute[]> {
    const subscriptions = (await this.loadSubscriptions()).filter((each) => !this.configured.names.includes(each.name));
    return [...this.configured.routes, ...subscriptions.map(subscriptionRoute)];
  }

  async listing(): Promise<WebhookRouteListing> {
    const unusable = this.configured.unusable;
    let snapshot: SubscriptionSnapshot;
    try {
      snapshot = await this.subscriptions.load();
    } catch (error) {
      if (!(error instanceof SubscriptionStoreError)) throw error;
      return { routes: [...this.configured.routes], unusable, subscriptionProblems: [], storeProblem: error.message };
    }
    const subscriptions = snapshot.subscriptions.filter((each) => !this.configured.names.includes(each.name));
    return {
      routes: [...this.configured.routes, ...subscriptions.map(subscriptionRoute)],
      unusable,
      subscriptionProblems: snapshot.problems,
      storeProblem: null,
    };
  }

  /** The subscriptions; none, with the reason logged once, when the store cannot be read. */
  private async loadSubscriptions(afresh = false): Promise<SubscriptionSnapshot['subscriptions']> {
    let snapshot: SubscriptionSnapshot;
    try {
      snapshot = await (afresh ? this.subscriptions.reload() : this.subscriptions.load());
    } catch (error) {
      const message = errorText(error);
      if (this.reported !== message) this.log.error(`webhook subscriptions are not served: ${message}`);
      this.reported = message;
      return [];
    }
    this.reported = null;
    if (snapshot !== this.reportedSnapshot) {
      for (const problem of snapshot.problems) this.log.warn(`webhook subscriptions: ${problem}; it is not served`);
      this.reportedSnapshot = snapshot;
    }
    return snapshot.subscriptions;
  }
}
