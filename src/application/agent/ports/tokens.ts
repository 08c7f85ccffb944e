import type { ServiceIdentifier } from 'inversify';
import type { McpServers } from './McpServers.js';
import type { Tool } from './Tool.js';
import type { ToolCatalog } from './ToolCatalog.js';

/**
 * The agent runtime's own tokens. The cron and webhook code never see them: they reach the
 * runtime only through the AgentRunner port (TOKENS.AgentRunner, TOKENS.JobRunAgentRunner).
 */
export const RUNTIME_TOKENS = {
  /** Multi-bound: every tool a session may be offered, the job tool excepted. */
  Tool: Symbol.for('agent.runtime.Tool') as ServiceIdentifier<Tool>,
  /** The tools of job runs: never the job tool, whatever the toolsets say. */
  JobRunToolCatalog: Symbol.for('agent.runtime.JobRunToolCatalog') as ServiceIdentifier<ToolCatalog>,
  /** The tools of chat sessions and webhook runs: the job tool too, where their toolsets grant it. */
  ToolCatalog: Symbol.for('agent.runtime.ToolCatalog') as ServiceIdentifier<ToolCatalog>,
  /** The MCP servers of `mcp_servers`, one pool per process (docs/mcp.md). */
  McpServers: Symbol.for('agent.runtime.McpServers') as ServiceIdentifier<McpServers>,
} as const;
