import type { AgentConfig, McpServerConfig } from './AgentConfig.js';

/** The names of the servers under `mcp_servers` that are not switched off (`enabled: false`), in file order. */
export function enabledMcpServers(config: AgentConfig | null): string[] {
  return Object.entries(config?.mcp_servers ?? {})
    .filter(([, server]) => server.enabled !== false)
    .map(([name]) => name);
}

/** The enabled servers of `mcp_servers` with their settings. */
export function enabledMcpServerConfigs(config: AgentConfig | null): Array<[string, McpServerConfig]> {
  return Object.entries(config?.mcp_servers ?? {}).filter(([, server]) => server.enabled !== false);
}
