import type { ServiceIdentifier } from 'inversify';
import type { AddressPolicy } from './publicAddresses.js';

/** Settings of the tool adapters; the tools themselves are bound under RUNTIME_TOKENS. */
export const TOOL_TOKENS = {
  /** Where `terminal` runs commands; default `$AGENT_HOME/workspace`. */
  TerminalWorkingDirectory: Symbol.for('agent.tools.TerminalWorkingDirectory') as ServiceIdentifier<string>,
  /** The addresses `web_extract` keeps to in runs that may not reach private networks. */
  PublicAddressPolicy: Symbol.for('agent.tools.PublicAddressPolicy') as ServiceIdentifier<AddressPolicy>,
} as const;
