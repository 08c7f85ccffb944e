import type { ServiceIdentifier } from 'inversify';
import type { ToolCatalog } from './Tool.js';

/** Adapter-level tokens of the agent runtime's tools. */
export const TOOL_TOKENS = {
  ToolCatalog: Symbol.for('agent.tools.ToolCatalog') as ServiceIdentifier<ToolCatalog>,
  /** Where `terminal` runs commands; default `$AGENT_HOME/workspace`. */
  TerminalWorkingDirectory: Symbol.for('agent.tools.TerminalWorkingDirectory') as ServiceIdentifier<string>,
} as const;
