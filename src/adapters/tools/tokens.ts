import type { ServiceIdentifier } from 'inversify';
import type { AddressPolicy } from './publicAddresses.js';
import type { Tool, ToolCatalog } from './Tool.js';

/** Adapter-level tokens of the agent runtime's tools. */
export const TOOL_TOKENS = {
  ToolCatalog: Symbol.for('agent.tools.ToolCatalog') as ServiceIdentifier<ToolCatalog>,
  /** Multi-bound: every tool the catalog holds eagerly (all but the job tool). */
  Tool: Symbol.for('agent.tools.Tool') as ServiceIdentifier<Tool>,
  /**
   * The job tool, resolved on first use. It is a thunk because the job tool needs the use
   * cases, whose run path needs the agent runner, which needs the catalog: asking for the tool
   * itself while the catalog is built would be a cycle.
   */
  JobTool: Symbol.for('agent.tools.JobTool') as ServiceIdentifier<() => Tool>,
  /** Where `terminal` runs commands; default `$AGENT_HOME/workspace`. */
  TerminalWorkingDirectory: Symbol.for('agent.tools.TerminalWorkingDirectory') as ServiceIdentifier<string>,
  /** The addresses `web_extract` keeps to in runs that may not reach private networks. */
  PublicAddressPolicy: Symbol.for('agent.tools.PublicAddressPolicy') as ServiceIdentifier<AddressPolicy>,
} as const;
