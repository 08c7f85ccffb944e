import type { Container } from 'inversify';
import type { Logger } from '../application/ports/Logger.js';
import type { FiringPath, SchedulerContext, SchedulerProvider } from '../application/ports/SchedulerProvider.js';
import { TOKENS } from '../application/ports/tokens.js';
import type { AgentConfig } from '../adapters/config/AgentConfig.js';
import { BuiltInTickerProvider, type TickerCadence } from '../adapters/scheduling/BuiltInTickerProvider.js';
import { startSchedulerProvider, type ProviderPlaces } from '../adapters/scheduling/schedulerProviderPlugins.js';

/** A provider's own settings: `cron.managed` for `managed`, `cron.<name>` for a plugin. */
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

/** What a process starts firing with (see startFiring). */
export interface FiringStart {
  container: Container;
  config: AgentConfig;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** The process's run path: the gateway's dispatcher and fire endpoint, or the command line's tick. */
  fire: FiringPath;
  /**
   * The provider to select: `cron.provider` in the gateway; undefined in CLI mode, where due jobs
   * fire only while a command or a session runs, so the built-in ticker fires them.
   */
  provider: string | undefined;
  places: ProviderPlaces;
  /** How often the built-in ticker looks, when it is the one that fires. */
  ticker: TickerCadence;
}

/**
 * The one place every process starts firing due jobs: `agent gateway`, an `agent chat`
 * session and a command's implicit tick all select their provider here (a named one that cannot
 * be used leaves the built-in ticker in its place, with one warning saying why; docs/plugins.md).
 * Resolves with the provider started, once its first look is done.
 */
export function startFiring(start: FiringStart): Promise<SchedulerProvider> {
  return startSchedulerProvider({
    name: start.provider,
    places: start.places,
    context: schedulerContextFor(start.container, start.config, start.env, start.fire, start.log),
    builtIn: () => new BuiltInTickerProvider(start.ticker),
  });
}
