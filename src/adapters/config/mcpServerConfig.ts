import type { AgentConfig, McpServerConfig } from './AgentConfig.js';

/** The names of the servers under `mcp_servers` that are not switched off (`enabled: false`), in file order. */
export function enabledMcpServers(config: AgentConfig | null): string[] {
  return Object.entries(config?.mcp_servers ?? {})
    .filter(([, server]) => server.enabled !== false)
    .map(([name]) => name);
}

/**
 * The servers each default preset grants (`mcp_servers.<name>.presets`): preset name to enabled
 * server names, in file order.
 */
export function mcpPresetGrants(config: AgentConfig | null): Record<string, string[]> {
  const grants: Record<string, string[]> = {};
  for (const [name, server] of enabledMcpServerConfigs(config)) {
    for (const preset of server.presets ?? []) (grants[preset] ??= []).push(name);
  }
  return grants;
}

/** The enabled servers of `mcp_servers` with their settings. */
export function enabledMcpServerConfigs(config: AgentConfig | null): Array<[string, McpServerConfig]> {
  return Object.entries(config?.mcp_servers ?? {}).filter(([, server]) => server.enabled !== false);
}
