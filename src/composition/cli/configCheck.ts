import { CheckJobs } from '../../application/cron/CheckJobs.js';
import { CheckPlatformCredentials } from '../../application/delivery/CheckPlatformCredentials.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { ConfigCheckApp } from '../../adapters/cli/configCommands.js';
import { YamlConfigLoader } from '../../adapters/config/YamlConfigLoader.js';
import type { Logger } from '../../application/ports/Logger.js';
import { agentPathsFor } from '../../adapters/persistence/agentPaths.js';
import { GhRepoCommenter } from '../../adapters/process/GhRepoCommenter.js';
import { buildCronContainer } from '../cronContainer.js';

/**
 * `agent config check`'s wiring, loaded only for that command. The container is built only once
 * config.yaml is known to load, and logs nothing: every finding is reported by the command itself,
 * so the loader's warnings would say the same thing twice.
 */
export function configCheckApp(home: string, env: NodeJS.ProcessEnv, quiet: Logger): ConfigCheckApp {
  const paths = agentPathsFor(home);
  let built: ReturnType<typeof buildCronContainer> | null = null;
  const container = async () => (await (built ??= buildCronContainer(paths, env, quiet))).container;
  return {
    diagnose: () => new YamlConfigLoader(paths.configFile).diagnose(),
    checkJobs: async () => (await container()).get(CheckJobs).execute(),
    checkCredentials: async () => {
      const built = await container();
      return new CheckPlatformCredentials(built.get(TOKENS.Platforms), built.get(TOKENS.WebhookRoutes), new GhRepoCommenter(env)).execute();
    },
  };
}
