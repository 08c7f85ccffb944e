import { ContainerModule } from 'inversify';
import { TOKENS } from '../../application/ports/tokens.js';
import { ShowStatus } from '../../application/status/ShowStatus.js';
import { FileGatewayRegistry } from '../../adapters/persistence/FileGatewayRegistry.js';
import { FileWebhookBacklog } from '../../adapters/persistence/FileWebhookBacklog.js';

/** `agent status` and the gateway's registration on its home. */
export const statusModule = new ContainerModule(({ bind, isBound }) => {
  bind(TOKENS.GatewayRegistry).to(FileGatewayRegistry).inSingletonScope();
  // A database store binds its own (persistenceModule).
  if (!isBound(TOKENS.WebhookBacklog)) bind(TOKENS.WebhookBacklog).to(FileWebhookBacklog).inSingletonScope();
  bind(ShowStatus).toSelf().inSingletonScope();
});
