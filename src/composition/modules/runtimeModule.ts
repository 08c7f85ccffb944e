import { ContainerModule } from 'inversify';
import { TOKENS } from '../../application/ports/tokens.js';
import { ConfiguredAgentRunner } from '../../adapters/agents/ConfiguredAgentRunner.js';
import { PlatformDeliveryChannel } from '../../adapters/delivery/PlatformDeliveryChannel.js';
import { PosixProcessTreeKiller } from '../../adapters/process/PosixProcessTreeKiller.js';
import { ProcessScriptExecutor } from '../../adapters/process/ProcessScriptExecutor.js';
import { PROCESS_TOKENS } from '../../adapters/process/tokens.js';
import { WindowsProcessTreeKiller } from '../../adapters/process/WindowsProcessTreeKiller.js';

/**
 * How runs happen: the configured agent runner, pre-run scripts as child processes, the
 * process-tree killer of this platform (for scripts, command agents and the terminal tool), and
 * the delivery router. No chat-platform sender is registered yet, so platform targets fail the
 * credential preflight with a message naming the missing `platforms.<name>` section.
 */
export const runtimeModule = new ContainerModule(({ bind }) => {
  bind(PROCESS_TOKENS.ProcessTreeKiller)
    .toDynamicValue((context) => {
      const logger = context.get(TOKENS.Logger, { optional: true }) ?? null;
      return process.platform === 'win32' ? new WindowsProcessTreeKiller({ logger }) : new PosixProcessTreeKiller({ logger });
    })
    .inSingletonScope();
  bind(TOKENS.AgentRunner).to(ConfiguredAgentRunner).inSingletonScope();
  bind(TOKENS.ScriptExecutor).to(ProcessScriptExecutor).inSingletonScope();
  bind(TOKENS.DeliveryChannel).toConstantValue(new PlatformDeliveryChannel([]));
});
