import { basename } from 'node:path';
import type { Container } from 'inversify';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { displayPath } from '../../adapters/shared/displayPath.js';
import { enabledMcpServers } from '../../adapters/config/mcpServerConfig.js';
import type { SandboxStatus } from '../../application/ports/Sandbox.js';

/** One start-up line: what the gateway tells its operator before it fires anything. */
export interface StartupLine {
  level: 'info' | 'warn';
  message: string;
  fields: Record<string, unknown>;
}

/**
 * The gateway's first lines: where its home is, which model runs (or the one config line that
 * adds one), which delivery platforms are configured, and whether the webhook listener is on
 * (when off, the one config line that turns it on), and the sandbox in use (a sandbox that cannot
 * be used was warned of by the start-up check). The trigger provider is told once it started.
 */
export function startupLines(
  container: Container,
  config: AgentConfig,
  paths: AgentPaths,
  listenerOn: boolean,
  sandbox?: SandboxStatus,
): StartupLine[] {
  const configFile = displayPath(paths.configFile);
  const lines: StartupLine[] = [{ level: 'info', message: `home: ${paths.home} (config ${configFile})`, fields: { home: paths.home } }];

  const problem = container.get(TOKENS.AgentRunner).problemWith({ provider: null, model: null });
  if (problem !== null) lines.push({ level: 'warn', message: `model: none usable; ${lowerFirst(problem)}`, fields: { model: null } });
  else {
    const model = describeModel(config);
    lines.push({ level: 'info', message: `model: ${model}`, fields: { model } });
  }

  const platforms = container
    .get(TOKENS.Platforms)
    .statuses()
    .filter((status) => status.configured)
    .map((status) => status.platform);
  lines.push({
    level: 'info',
    message:
      platforms.length > 0
        ? `delivery platforms: ${platforms.join(', ')}`
        : 'delivery platforms: none configured ("agent platforms" shows what each one needs)',
    fields: { platforms },
  });

  const mcpServers = enabledMcpServers(config);
  if (mcpServers.length > 0) {
    lines.push({
      level: 'info',
      message: `MCP servers: ${mcpServers.join(', ')} (each started when a run first needs it; "agent mcp test <name>" tries one)`,
      fields: { mcp_servers: mcpServers },
    });
  }

  if (sandbox?.active)
    lines.push({ level: 'info', message: 'sandbox: bwrap (scripts, terminal commands and command agents)', fields: { sandbox: 'bwrap' } });
  else if (sandbox?.mode === 'off') lines.push({ level: 'info', message: 'sandbox: off (tools.sandbox: off)', fields: { sandbox: 'off' } });

  if (!listenerOn) {
    lines.push({
      level: 'info',
      message: `webhook listener: off; to turn it on, add "platforms: {webhook: {enabled: true}}" to ${configFile}`,
      fields: { webhook: false },
    });
  }
  return lines;
}

/** `provider/name`, or `command (program)` for a local program. */
function describeModel(config: AgentConfig): string {
  const model = config.model ?? {};
  const provider = model.provider ?? '';
  if (provider === 'command' && model.command?.[0]) return `command (${basename(model.command[0])})`;
  return model.name ? `${provider}/${model.name}` : provider;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
