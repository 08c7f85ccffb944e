import { join } from 'node:path';
import { ContainerModule, type Container } from 'inversify';
import { RUNTIME_TOKENS } from '../../application/agent/ports/tokens.js';
import { LazyToolCatalog } from '../../adapters/tools/LazyToolCatalog.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { NO_SANDBOX } from '../../application/ports/Sandbox.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { SdkMcpServers } from '../../adapters/mcp/SdkMcpServers.js';
import { ChildEnvironments } from '../../adapters/process/ChildEnvironments.js';
import { agentVersion } from '../cli/agentVersion.js';

/**
 * The two tool catalogs of `container` (see toolsModule), bound at once but loaded, modules and
 * all, into the container the first time a session asks one for its tools: `agent cron list`
 * and the other commands that run no agent never parse the tools.
 */
export function toolCatalogsModule(container: Container): ContainerModule {
  let loading: Promise<typeof import('./toolsModule.js')> | null = null;
  const loaded = async () => {
    loading ??= import('./toolsModule.js').then((module) => {
      container.load(module.toolsModule);
      return module;
    });
    try {
      return await loading;
    } catch (error) {
      loading = null;
      throw error;
    }
  };
  return new ContainerModule(({ bind }) => {
    // One pool per process: servers are started by the first run that needs them and kept.
    bind(RUNTIME_TOKENS.McpServers)
      .toDynamicValue(
        (context) =>
          new SdkMcpServers({
            servers: context.get(CONFIG_TOKENS.AgentConfig, { optional: true })?.mcp_servers ?? {},
            environment: context.get(CONFIG_TOKENS.Environment, { optional: true }) ?? process.env,
            childEnvironment: (context.get(ChildEnvironments, { optional: true }) ?? ChildEnvironments.ofThisProcess()).forUntrusted(),
            workspace: join(context.get(TOKENS.AgentPaths).home, 'workspace'),
            sandbox: context.get(TOKENS.Sandbox, { optional: true }) ?? NO_SANDBOX,
            killer: context.get(TOKENS.ProcessTreeKiller),
            logger: context.get(TOKENS.Logger, { optional: true }) ?? null,
            version: agentVersion(),
          }),
      )
      .inSingletonScope();
    bind(RUNTIME_TOKENS.JobRunToolCatalog).toConstantValue(
      new LazyToolCatalog(async () => container.get((await loaded()).LOADED_TOOL_CATALOGS.JobRuns)),
    );
    bind(RUNTIME_TOKENS.ToolCatalog).toConstantValue(
      new LazyToolCatalog(async () => container.get((await loaded()).LOADED_TOOL_CATALOGS.Sessions)),
    );
  });
}
