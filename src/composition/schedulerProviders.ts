import type { Container } from 'inversify';
import type { Logger } from '../application/ports/Logger.js';
import type { FiringPath, SchedulerContext } from '../application/ports/SchedulerProvider.js';
import { TOKENS } from '../application/ports/tokens.js';
import type { AgentConfig } from '../adapters/config/AgentConfig.js';

/** A provider's own settings (decisions §11): `cron.managed` for `managed`, `cron.<name>` for a plugin. */
export function providerSettings(config: AgentConfig, name: string): Record<string, unknown> {
  const section = (config.cron as unknown as Record<string, unknown>)[name];
  return section !== null && typeof section === 'object' && !Array.isArray(section) ? { ...(section as Record<string, unknown>) } : {};
}

/** What the provider named `name` is given: this home's store, clock and logger, the firing path, its settings and the environment. */
export function schedulerContextFor(
  container: Container,
  config: AgentConfig,
  env: NodeJS.ProcessEnv,
  fire: FiringPath,
  log: Logger,
): SchedulerContext {
  const name = config.cron.provider?.trim() ?? '';
  return {
    jobs: container.get(TOKENS.JobRepository),
    clock: container.get(TOKENS.Clock),
    fire,
    log,
    settings: Object.freeze(name ? providerSettings(config, name) : {}),
    env: Object.freeze({ ...env }),
  };
}

/** The firing path of a process that only tells the provider about its changes and fires nothing through it. */
export const NOT_FIRING: FiringPath = {
  due: async () => ({ retrySoon: false }),
  slot: async () => ({ status: 'unavailable', retryAfterSeconds: 60 }),
  onRunFinished: () => undefined,
};
