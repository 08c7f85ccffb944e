import { ContainerModule, type ResolutionContext, type ServiceIdentifier } from 'inversify';
import type { ToolCatalog } from '../../application/agent/ports/ToolCatalog.js';
import { RUNTIME_TOKENS } from '../../application/agent/ports/tokens.js';
import { ClarifyTool } from '../../adapters/tools/ClarifyTool.js';
import { CronJobTool } from '../../adapters/tools/CronJobTool.js';
import { DefaultToolCatalog } from '../../adapters/tools/DefaultToolCatalog.js';
import { McpToolCatalog } from '../../adapters/mcp/McpToolCatalog.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { publicAddressesOnly } from '../../adapters/tools/publicAddresses.js';
import { TerminalTool } from '../../adapters/tools/TerminalTool.js';
import { TOOL_TOKENS } from '../../adapters/tools/tokens.js';
import { WebExtractTool } from '../../adapters/tools/WebExtractTool.js';
import { WebSearchTool } from '../../adapters/tools/WebSearchTool.js';
import { VisionTool } from '../../adapters/tools/VisionTool.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { mcpPresetGrants } from '../../adapters/config/mcpServerConfig.js';

/** The loaded catalogs, which the lazy ones of toolCatalogsModule hand on to. */
export const LOADED_TOOL_CATALOGS = {
  JobRuns: Symbol.for('agent.tools.LoadedJobRunCatalog') as ServiceIdentifier<ToolCatalog>,
  Sessions: Symbol.for('agent.tools.LoadedSessionCatalog') as ServiceIdentifier<ToolCatalog>,
} as const;

/**
 * The tools of agent sessions, in two catalogs. Job runs get the tools without the job tool.
 * Chat sessions and webhook runs get the job tool too, where their toolsets grant
 * it; it reaches jobs through the JobControl port, whose run path uses the job runs' runner, so
 * the object graph has no cycle. Loaded into the container by toolCatalogsModule on the first
 * session that asks for a tool.
 */
export const toolsModule = new ContainerModule(({ bind }) => {
  bind(RUNTIME_TOKENS.Tool).to(TerminalTool).inSingletonScope();
  bind(RUNTIME_TOKENS.Tool).to(WebSearchTool).inSingletonScope();
  bind(TOOL_TOKENS.PublicAddressPolicy).toConstantValue(publicAddressesOnly);
  bind(RUNTIME_TOKENS.Tool).to(WebExtractTool).inSingletonScope();
  bind(RUNTIME_TOKENS.Tool).to(VisionTool).inSingletonScope();
  bind(RUNTIME_TOKENS.Tool).to(ClarifyTool).inSingletonScope();
  // Both catalogs add the tools of the MCP servers their toolsets name (docs/mcp.md).
  const withMcp = (context: ResolutionContext, catalog: ToolCatalog) =>
    new McpToolCatalog(
      catalog,
      context.get(RUNTIME_TOKENS.McpServers),
      context.get(TOKENS.Logger, { optional: true }) ?? null,
      mcpPresetGrants(context.get(CONFIG_TOKENS.AgentConfig)),
    );
  bind(LOADED_TOOL_CATALOGS.JobRuns)
    .toDynamicValue((context) => withMcp(context, new DefaultToolCatalog(context.getAll(RUNTIME_TOKENS.Tool))))
    .inSingletonScope();
  bind(CronJobTool).toSelf().inSingletonScope();
  bind(LOADED_TOOL_CATALOGS.Sessions)
    .toDynamicValue((context) =>
      withMcp(context, new DefaultToolCatalog([...context.getAll(RUNTIME_TOKENS.Tool), context.get(CronJobTool)])),
    )
    .inSingletonScope();
});
