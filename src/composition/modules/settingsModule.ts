import { ContainerModule } from 'inversify';
import type { Logger } from '../../application/ports/Logger.js';
import type { AgentPaths, CronSettings } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';

/** Values read once at start-up: where things are, the config file, the cron settings, the log. */
export function settingsModule(values: {
  paths: AgentPaths;
  config: AgentConfig;
  settings: CronSettings;
  logger: Logger;
  env: NodeJS.ProcessEnv;
}): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind(TOKENS.AgentPaths).toConstantValue(values.paths);
    bind(CONFIG_TOKENS.AgentConfig).toConstantValue(values.config);
    bind(CONFIG_TOKENS.Environment).toConstantValue(values.env);
    bind(TOKENS.CronSettings).toConstantValue(values.settings);
    bind(TOKENS.Logger).toConstantValue(values.logger);
  });
}
