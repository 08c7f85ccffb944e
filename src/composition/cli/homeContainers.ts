import type { StartCliFiring } from '../../adapters/cli/cliFiring.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { agentPathsFor } from '../../adapters/persistence/agentPaths.js';
import { runOnTimeZone } from '../../adapters/system/hostTimeZone.js';
import { RUNTIME_TOKENS } from '../../application/agent/ports/tokens.js';
import type { McpServers } from '../../application/agent/ports/McpServers.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { buildApplicationContainer, type ApplicationContainer } from '../applicationContainer.js';
import { installationDirectory } from '../installationDirectory.js';
import { startFiring } from '../schedulerProviders.js';

/** The command line's containers: one per home, built on first use, so a command that needs none loads nothing. */
export class HomeContainers {
  private readonly built = new Map<string, Promise<ApplicationContainer & { paths: AgentPaths }>>();
  /** The MCP server pools the command's runs made: a command that ran nothing builds none to close. */
  private readonly mcpServers = new Set<McpServers>();

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly logger: Logger,
  ) {}

  /** The container of `home`, built now if this process has not built it yet. */
  of(home: string): Promise<ApplicationContainer & { paths: AgentPaths }> {
    let built = this.built.get(home);
    if (!built) {
      const paths = agentPathsFor(home);
      built = buildApplicationContainer(paths, this.env, this.logger).then((container) => {
        container.container.onActivation(RUNTIME_TOKENS.McpServers, (_context, servers) => {
          this.mcpServers.add(servers);
          return servers;
        });
        // Times are shown and computed in the jobs' zone: reading it from Date spares start-up time.
        runOnTimeZone(container.settings.timeZone);
        return { ...container, paths };
      });
      this.built.set(home, built);
    }
    return built;
  }

  /**
   * Stops the MCP servers the command's runs started (docs/mcp.md): an HTTP server's open
   * stream, like a stdio server's pipes, would otherwise keep the command from ending. Never throws.
   */
  async closeMcpServers(): Promise<void> {
    await Promise.all([...this.built.values()].map((built) => built.catch(() => null)));
    await Promise.all([...this.mcpServers].map((servers) => servers.close().catch(() => undefined)));
  }

  /**
   * CLI mode fires through the same place as the gateway, with no provider named: due jobs fire
   * only while a command or a session runs, so the built-in ticker fires them.
   */
  firingIn(home: string): StartCliFiring {
    return async (cadence, fire) => {
      const { container, paths } = await this.of(home);
      return startFiring({
        container,
        config: container.get(CONFIG_TOKENS.AgentConfig),
        env: this.env,
        log: this.logger,
        fire,
        provider: undefined,
        places: { installationDir: installationDirectory(import.meta.url), agentHome: paths.home },
        ticker: cadence,
      });
    };
  }
}
