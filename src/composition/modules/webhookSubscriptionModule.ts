import { ContainerModule } from 'inversify';
import { TOKENS } from '../../application/ports/tokens.js';
import { ListWebhookRuns } from '../../application/webhook/ListWebhookRuns.js';
import { RedeliverWebhookRun } from '../../application/webhook/RedeliverWebhookRun.js';
import { ListWebhooks } from '../../application/webhook/subscriptions/ListWebhooks.js';
import { RemoveWebhookSubscription } from '../../application/webhook/subscriptions/RemoveWebhookSubscription.js';
import { SubscribeWebhook } from '../../application/webhook/subscriptions/SubscribeWebhook.js';
import { TestWebhookSubscription } from '../../application/webhook/subscriptions/TestWebhookSubscription.js';
import { ConfiguredWebhookRoutes } from '../../adapters/config/ConfiguredWebhookRoutes.js';
import { HttpWebhookClient } from '../../adapters/http/HttpWebhookClient.js';
import { GhRepoCommenter } from '../../adapters/process/GhRepoCommenter.js';
import { RandomSecretGenerator } from '../../adapters/system/RandomSecretGenerator.js';
import { ConsoleLogger } from '../../adapters/logging/ConsoleLogger.js';
import { GatewayAnswerLog } from '../../adapters/logging/GatewayAnswerLog.js';
import { answerLogSpoolOf } from '../gateway/answerLogSpool.js';

/**
 * The webhook subscriptions and their store, the webhook routes (config.yaml, then the
 * subscriptions), the run records and the `agent webhook` commands, in every container: the
 * commands and the gateway's listener see the same routes, and `agent webhook runs` reads the
 * records the gateway's worker writes without the gateway's own module. Nothing here is built
 * before it is asked for. The gateway adds `webhookModule` on top.
 */
export const webhookSubscriptionModule = new ContainerModule(({ bind }) => {
  bind(ConfiguredWebhookRoutes).toSelf().inSingletonScope();
  bind(TOKENS.WebhookRoutes).toService(ConfiguredWebhookRoutes);
  bind(TOKENS.SecretGenerator).to(RandomSecretGenerator).inSingletonScope();
  bind(TOKENS.LocalWebhookClient).to(HttpWebhookClient).inSingletonScope();
  bind(SubscribeWebhook).toSelf().inSingletonScope();
  bind(ListWebhooks).toSelf().inSingletonScope();
  bind(RemoveWebhookSubscription).toSelf().inSingletonScope();
  bind(TestWebhookSubscription).toSelf().inSingletonScope();
  bind(ListWebhookRuns).toSelf().inSingletonScope();
  // Pull-request comments: the worker's deliveries and `agent webhook redeliver` (gh is started only to comment).
  bind(TOKENS.RepoCommenter).to(GhRepoCommenter).inSingletonScope();
  // `agent webhook redeliver` of an answer that went to the log: into the gateway log, through the gateway of this home.
  bind(TOKENS.AnswerLog)
    .toDynamicValue(
      (context) =>
        new GatewayAnswerLog(
          answerLogSpoolOf(context.get(TOKENS.AgentPaths)),
          context.get(TOKENS.GatewayRegistry),
          context.get(TOKENS.ProcessIdentity),
          new ConsoleLogger(process.stderr, 'info'),
        ),
    )
    .inSingletonScope();
  bind(RedeliverWebhookRun).toSelf().inSingletonScope();
});
