import { ContainerModule } from 'inversify';
import { RUNTIME_TOKENS } from '../../application/agent/ports/tokens.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { ConfiguredAgentRunner } from '../../adapters/agents/ConfiguredAgentRunner.js';
import { PlatformDelivery } from '../../application/delivery/PlatformDelivery.js';
import { ConfiguredPlatforms } from '../../adapters/delivery/ConfiguredPlatforms.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { platformProcessTreeKiller } from '../../adapters/process/platformProcessTreeKiller.js';
import { ChildEnvironments } from '../../adapters/process/ChildEnvironments.js';
import { ProcessScriptExecutor } from '../../adapters/process/ProcessScriptExecutor.js';
import { runLimitsFrom } from '../../adapters/config/concurrencySettings.js';
import { configuredSandbox } from '../../adapters/process/BubblewrapSandbox.js';

/**
 * How runs happen: the configured agent runner, pre-run scripts as child processes (with the
 * environments of ChildEnvironments, which the terminal tool uses too), the
 * process-tree killer of this platform (for scripts, command agents and the terminal tool), and
 * the delivery path over the chat platforms of config.yaml and the environment (each platform's
 * adapter loaded only when a delivery needs it).
 */
export const runtimeModule = new ContainerModule(({ bind }) => {
  bind(TOKENS.ProcessTreeKiller)
    .toDynamicValue((context) => platformProcessTreeKiller(context.get(TOKENS.Logger, { optional: true }) ?? null))
    .inSingletonScope();
  // Job runs' runner holds no job tool; the runner of chat and webhook sessions adds it.
  bind(ConfiguredAgentRunner).toSelf().inSingletonScope();
  bind(TOKENS.JobRunAgentRunner).toService(ConfiguredAgentRunner);
  bind(TOKENS.AgentRunner)
    .toDynamicValue((context) => context.get(ConfiguredAgentRunner).withTools(context.get(RUNTIME_TOKENS.ToolCatalog)))
    .inSingletonScope();
  // What scripts and the terminal tool may see of the environment: no credential of the service.
  bind(ChildEnvironments).toSelf().inSingletonScope();
  // Scripts, terminal commands and command agent programs run in bubblewrap where it works (tools.sandbox).
  bind(TOKENS.Sandbox)
    .toDynamicValue((context) => configuredSandbox(context.get(CONFIG_TOKENS.AgentConfig).tools, context.get(TOKENS.AgentPaths)))
    .inSingletonScope();
  bind(TOKENS.ScriptExecutor).to(ProcessScriptExecutor).inSingletonScope();
  // One set for the whole process: every kind of run shares them.
  bind(TOKENS.RunLimits)
    .toDynamicValue((context) => runLimitsFrom(context.get(CONFIG_TOKENS.AgentConfig)))
    .inSingletonScope();
  bind(TOKENS.Platforms)
    .toDynamicValue(
      (context) => new ConfiguredPlatforms(context.get(CONFIG_TOKENS.AgentConfig).platforms, context.get(CONFIG_TOKENS.Environment)),
    )
    .inSingletonScope();
  bind(TOKENS.DeliveryChannel).to(PlatformDelivery).inSingletonScope();
});
