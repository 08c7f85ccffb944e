import { ContainerModule } from 'inversify';
import { TOKENS } from '../../application/ports/tokens.js';
import { ShowStatus } from '../../application/status/ShowStatus.js';
import { FileGatewayRegistry } from '../../adapters/persistence/FileGatewayRegistry.js';

/** `agent status` and the gateway's registration on its home. */
export const statusModule = new ContainerModule(({ bind }) => {
  bind(TOKENS.GatewayRegistry).to(FileGatewayRegistry).inSingletonScope();
  bind(ShowStatus).toSelf().inSingletonScope();
});
