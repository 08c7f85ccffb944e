import { CheckJobs } from '../../application/cron/CheckJobs.js';
import { CheckPlatformCredentials } from '../../application/delivery/CheckPlatformCredentials.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { ConfigCheckApp } from '../../adapters/cli/configCommands.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import type { Logger } from '../../application/ports/Logger.js';
import { agentPathsFor } from '../../adapters/persistence/agentPaths.js';
import { GhRepoCommenter } from '../../adapters/process/GhRepoCommenter.js';
import { buildApplicationContainer } from '../applicationContainer.js';
import { installationDirectory } from '../installationDirectory.js';
import { checkConfigFile, checkStartup, takeOutConfiguredCredentials } from '../startupChecks.js';
import type { HeldCredentials } from '../../adapters/system/environmentScrub.js';

/**
 * `agent config check`'s wiring, loaded only for that command. It runs the gateway's own
 * start-up check (startupChecks.ts), then the jobs. The container is built only once config.yaml
 * is known to load, and logs nothing: every finding is reported by the command itself, so the
 * loader's warnings would say the same thing twice.
 */
export function configCheckApp(home: string, env: NodeJS.ProcessEnv, quiet: Logger, credentials?: HeldCredentials): ConfigCheckApp {
  const paths = agentPathsFor(home);
  let built: ReturnType<typeof buildApplicationContainer> | null = null;
  const installationDir = installationDirectory(import.meta.url);
  const container = async () => (await (built ??= buildApplicationContainer(paths, env, quiet, installationDir, false))).container;
  return {
    checkStartup: async () => {
      const file = await checkConfigFile(paths, env);
      if (file.config === null || file.findings.some((finding) => finding.effect === 'refused'))
        return { findings: file.findings, usable: false };
      const built = await container();
      const config = built.get(CONFIG_TOKENS.AgentConfig);
      // As the gateway does: what this process's environment still shows is what the gateway's would.
      takeOutConfiguredCredentials(credentials, config);
      const rest = await checkStartup({ container: built, config, paths, env, installationDir, log: quiet, credentials });
      return { findings: [...file.findings, ...rest.findings], usable: true };
    },
    checkJobs: async () => (await container()).get(CheckJobs).execute(),
    checkCredentials: async () => {
      const built = await container();
      return new CheckPlatformCredentials(built.get(TOKENS.Platforms), built.get(TOKENS.WebhookRoutes), new GhRepoCommenter(env)).execute();
    },
  };
}
