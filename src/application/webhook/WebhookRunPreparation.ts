/**
 * Everything a webhook run checks before a token is spent: its route still exists, a model is
 * usable, and its delivery resolves for this payload to a target that can be delivered to.
 */
import { inject, injectable, optional } from 'inversify';
import { DailyBudgets } from '../runs/DailyBudgets.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import { planWebhookDelivery, type WebhookDelivery } from '../../domain/webhook/webhookRun.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import type { AgentRunner } from '../ports/AgentRunner.js';
import type { DeliveryChannel } from '../ports/DeliveryChannel.js';
import type { WebhookWorkerSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import type { WebhookRoutes } from '../ports/WebhookRoutes.js';

/** A run ready to go: its route and where its answer goes; or why it cannot run. */
export type PreparedWebhookRun = { route: WebhookRoute; delivery: WebhookDelivery } | { error: string };

/** Prepares webhook runs. */
@injectable()
export class WebhookRunPreparation {
  constructor(
    @inject(TOKENS.WebhookRoutes) private readonly routes: WebhookRoutes,
    @inject(TOKENS.AgentRunner) private readonly agent: AgentRunner,
    @inject(TOKENS.DeliveryChannel) private readonly channel: DeliveryChannel,
    @inject(TOKENS.WebhookWorkerSettings) private readonly settings: WebhookWorkerSettings,
    /** Without it (tests that build the run path by hand), no daily cap holds. */
    @inject(DailyBudgets) @optional() private readonly daily: DailyBudgets | null = null,
  ) {}

  /** The route and delivery of `event`, or the sentence that says why it is not run. */
  async prepare(event: WebhookEvent): Promise<PreparedWebhookRun> {
    const route = await this.routes.find(event.route);
    if (route === null) return { error: `the route '${event.route}' no longer exists` };
    const modelProblem = this.agent.problemWith(this.settings.defaultModel);
    if (modelProblem) return { error: modelProblem };
    const plan = planWebhookDelivery(route, event.payload);
    if (!plan.ok) return { error: `route '${route.name}' cannot deliver with ${route.deliver}: ${plan.error}` };
    if (plan.delivery.kind === 'platform') {
      const problem = this.channel.problemWith(plan.delivery.target);
      if (problem) return { error: `route '${route.name}' cannot deliver: ${problem}` };
    }
    // A run past a daily cap (the route's `budget.max_cost_per_day`, `agent.budget.max_cost_per_day`) spends nothing.
    const overBudget = route.deliverOnly
      ? null
      : await this.daily?.problemFor({ kind: 'webhook', subject: route.name }, route.budget?.max_cost_per_day, this.settings.maxCostPerDay);
    if (overBudget) return { error: overBudget };
    return { route, delivery: plan.delivery };
  }
}
