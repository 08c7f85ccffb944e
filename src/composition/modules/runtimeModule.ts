import { ContainerModule } from 'inversify';
import { TOKENS } from '../../application/ports/tokens.js';
import { ConfiguredAgentRunner } from '../../adapters/agents/ConfiguredAgentRunner.js';
import { PlatformDeliveryChannel } from '../../adapters/delivery/PlatformDeliveryChannel.js';
import { ProcessScriptExecutor } from '../../adapters/process/ProcessScriptExecutor.js';

/**
 * How runs happen: the configured agent runner, pre-run scripts as child processes, and the
 * delivery router. No chat-platform sender is registered yet, so platform targets fail the
 * credential preflight with a message naming the missing `platforms.<name>` section.
 */
export const runtimeModule = new ContainerModule(({ bind }) => {
  bind(TOKENS.AgentRunner).to(ConfiguredAgentRunner).inSingletonScope();
  bind(TOKENS.ScriptExecutor).to(ProcessScriptExecutor).inSingletonScope();
  bind(TOKENS.DeliveryChannel).toConstantValue(new PlatformDeliveryChannel([]));
});
