import { ContainerModule } from 'inversify';
import type { WebhookListenerSettings } from '../../application/ports/WebhookSettings.js';
import type { WebhookWorkerSettings } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { AcceptWebhook } from '../../application/webhook/AcceptWebhook.js';
import { WebhookAdmission } from '../../application/webhook/WebhookAdmission.js';
import { WebhookEventExecution } from '../../application/webhook/WebhookEventExecution.js';
import { WebhookAgentStep } from '../../application/webhook/WebhookAgentStep.js';
import { WebhookAnswerStep } from '../../application/webhook/WebhookAnswerStep.js';
import { WebhookRunPreparation } from '../../application/webhook/WebhookRunPreparation.js';
import { WebhookSignatureVerifier } from '../../adapters/security/WebhookSignatureVerifier.js';
import { WebhookWorker } from '../../adapters/webhook/WebhookWorker.js';

/**
 * The webhook platform on the embedded defaults: the durable inbox under
 * `$AGENT_HOME/webhooks/inbox`, the rate limit in the gateway's memory (a singleton: it holds
 * the windows), the accept path and the worker. The routes, the run records (which `agent webhook
 * runs` reads without this module) and the pull-request commenter (which `agent webhook
 * redeliver` uses too) come from webhookSubscriptionModule, which every container loads.
 */
export function webhookModule(settings: { listener: WebhookListenerSettings; worker: WebhookWorkerSettings }): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind(TOKENS.WebhookListenerSettings).toConstantValue(settings.listener);
    bind(TOKENS.WebhookWorkerSettings).toConstantValue(settings.worker);
    bind(TOKENS.SignatureVerifier).to(WebhookSignatureVerifier).inSingletonScope();
    bind(WebhookAdmission).toSelf().inSingletonScope();
    bind(AcceptWebhook).toSelf().inSingletonScope();
    bind(WebhookEventExecution).toSelf().inSingletonScope();
    bind(WebhookRunPreparation).toSelf().inSingletonScope();
    bind(WebhookAgentStep).toSelf().inSingletonScope();
    bind(WebhookAnswerStep).toSelf().inSingletonScope();
    bind(WebhookWorker).toSelf().inSingletonScope();
  });
}
