import 'reflect-metadata';
import { Container } from 'inversify';
import type { Logger } from '../application/ports/Logger.js';
import type { AgentPaths, CronSettings } from '../application/ports/Settings.js';
import type { AgentConfig } from '../adapters/config/AgentConfig.js';
import { cronSettingsFrom } from '../adapters/config/cronSettings.js';
import { forgetConfigCache } from '../adapters/config/forgetConfigCache.js';
import { displayPath } from '../adapters/shared/displayPath.js';
import { JobChangeNotifier, notifyJobChanges } from './jobChangeNotifier.js';
import { installationDirectory } from './installationDirectory.js';
import { botChatModule } from './modules/botChatModule.js';
import { chatUseCaseModule } from './modules/chatUseCaseModule.js';
import { cronUseCaseModule } from './modules/cronUseCaseModule.js';
import { runPipelineModule } from './modules/runPipelineModule.js';
import { deliveryUseCaseModule } from './modules/deliveryUseCaseModule.js';
import { databaseAdapter, type DatabaseStore } from './databaseStore.js';
import { storesModule } from './stores.js';
import { TOKENS } from '../application/ports/tokens.js';
import { runtimeModule } from './modules/runtimeModule.js';
import { settingsModule } from './modules/settingsModule.js';
import { systemModule } from './modules/systemModule.js';
import { toolCatalogsModule } from './modules/toolCatalogsModule.js';
import { statusModule } from './modules/statusModule.js';
import { webhookSubscriptionModule } from './modules/webhookSubscriptionModule.js';
import { eventsModule } from './modules/eventsModule.js';
import { processTracing } from './tracing.js';

/**
 * The store of a configured database (docs/scaling.md), or null for the files. The database
 * client and its adapters are chunks of their own, loaded only then.
 */
async function databaseStore(config: AgentConfig, env: NodeJS.ProcessEnv): Promise<DatabaseStore | null> {
  const { configuredDatabase, NO_TICK_LOCK } = await import('../adapters/postgres/jobStoreChoice.js');
  const location = configuredDatabase(config, env);
  if (!location) return null;
  const [
    { PostgresDatabase },
    { PostgresJobRepository },
    { PostgresReplicaLeases },
    { migrate, migrationStates },
    { PostgresWebhookInbox },
    { PostgresWebhookBacklog },
    { PostgresSubscriptionRepository },
    { PostgresWebhookRunRecords },
    { PostgresRunOutputStore },
    { PostgresWebhookRateLimiter },
    { PostgresRunLedger },
    { PostgresUsedFireTokens },
    { PostgresEventOutbox },
    { webhookOutputRetention },
    { runRetention },
  ] = await Promise.all([
    import('../adapters/postgres/PostgresDatabase.js'),
    import('../adapters/postgres/PostgresJobRepository.js'),
    import('../adapters/postgres/PostgresReplicaLeases.js'),
    import('../adapters/postgres/schemaMigrations.js'),
    import('../adapters/postgres/PostgresWebhookInbox.js'),
    import('../adapters/postgres/PostgresWebhookBacklog.js'),
    import('../adapters/postgres/PostgresSubscriptionRepository.js'),
    import('../adapters/postgres/PostgresWebhookRunRecords.js'),
    import('../adapters/postgres/PostgresRunOutputStore.js'),
    import('../adapters/postgres/PostgresWebhookRateLimiter.js'),
    import('../adapters/postgres/PostgresRunLedger.js'),
    import('../adapters/postgres/PostgresUsedFireTokens.js'),
    import('../adapters/postgres/PostgresEventOutbox.js'),
    import('../adapters/config/webhookSettings.js'),
    import('../adapters/config/runSettings.js'),
  ]);
  const database = await PostgresDatabase.open(location);
  // One per process: it keeps the term of this process's lease, which fences its claims.
  const leases = new PostgresReplicaLeases(database);
  const repository = new PostgresJobRepository(database, leases);
  const subscriptions = new PostgresSubscriptionRepository(database);
  return {
    repository,
    tickLock: NO_TICK_LOCK,
    leases,
    label: location.label,
    chatStore: async () => (await import('../adapters/postgres/PostgresChatStore.js')).postgresChatStore(database),
    chatReceiverLease: async () =>
      new (await import('../adapters/postgres/PostgresChatReceiverLease.js')).PostgresChatReceiverLease(database),
    migrate: () => migrate(database),
    migrations: () => migrationStates(database),
    watch: (onChange) => repository.watch(onChange),
    listenForChanges: () => subscriptions.watch(),
    stores: [
      databaseAdapter(
        TOKENS.WebhookInbox,
        (context) =>
          new PostgresWebhookInbox(
            database,
            context.get(TOKENS.ProcessIdentity),
            context.get(TOKENS.Clock),
            context.get(TOKENS.OrphanProcesses),
            leases,
          ),
      ),
      databaseAdapter(TOKENS.WebhookBacklog, () => new PostgresWebhookBacklog(database)),
      databaseAdapter(TOKENS.WebhookSubscriptionRepository, () => subscriptions),
      databaseAdapter(TOKENS.WebhookRunRecords, () => new PostgresWebhookRunRecords(database, webhookOutputRetention(config))),
      databaseAdapter(TOKENS.RunOutputStore, () => new PostgresRunOutputStore(database)),
      databaseAdapter(TOKENS.WebhookRateLimiter, () => new PostgresWebhookRateLimiter(database)),
      databaseAdapter(TOKENS.RunLedger, (context) => new PostgresRunLedger(database, runRetention(config), context.get(TOKENS.Clock))),
      databaseAdapter(TOKENS.UsedFireTokens, () => new PostgresUsedFireTokens(database)),
      databaseAdapter(TOKENS.EventOutbox, () => new PostgresEventOutbox(database)),
    ],
  };
}

export interface ApplicationContainer {
  container: Container;
  settings: CronSettings;
  /** Non-fatal configuration problems, one sentence each, already given to the logger. */
  warnings: string[];
  /** Tells the configured cron provider about every job changed through this container. */
  notifier: JobChangeNotifier;
  /** The database holding the jobs, or null when they are in `$AGENT_HOME/cron/jobs.json`. */
  database: DatabaseStore | null;
}

/**
 * Wires the whole application, every command's and the gateway's use cases on their ports:
 * config.yaml is loaded and validated once per process, and never copied anywhere (it holds
 * secrets); the stores are bound from the wiring table (stores.ts), in files under `$AGENT_HOME`
 * or on the configured database. The gateway adds its listeners on top. Throws ConfigError
 * `CONFIG.*` on bad config.
 */
export async function buildApplicationContainer(
  paths: AgentPaths,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  installationDir: string = installationDirectory(import.meta.url),
  /** False when the caller reports config.yaml's warnings itself (the gateway's start-up check). */
  logWarnings = true,
): Promise<ApplicationContainer> {
  // The loader (js-yaml and the schema) is a chunk of its own: --help and --version never load it.
  // Traces (docs/traces.md) are loaded meanwhile, only when the environment asks for their export.
  const [{ YamlConfigLoader }, , tracing] = await Promise.all([
    import('../adapters/config/YamlConfigLoader.js'),
    forgetConfigCache(paths.home),
    processTracing(env, logger),
  ]);
  const { config, warnings } = new YamlConfigLoader(paths.configFile).load();
  const settingsWarnings: string[] = [];
  const settings = cronSettingsFrom(config, env, settingsWarnings, displayPath(paths.configFile));
  const allWarnings = [...warnings, ...settingsWarnings];
  if (logWarnings) for (const warning of allWarnings) logger.warn(warning);
  const jobStore = await databaseStore(config, env);
  const container = new Container({ defaultScope: 'Singleton' });
  container.load(
    settingsModule({ paths, config, settings, logger, env }),
    systemModule,
    storesModule(jobStore),
    runtimeModule,
    botChatModule,
    toolCatalogsModule(container),
    cronUseCaseModule,
    runPipelineModule,
    chatUseCaseModule,
    deliveryUseCaseModule,
    webhookSubscriptionModule,
    statusModule,
    eventsModule,
  );
  // Unbound without traces: the use cases fall back to NO_TRACING.
  if (tracing) container.bind(TOKENS.RunTracing).toConstantValue(tracing);
  const provider = config.cron.provider?.trim();
  const notifier = new JobChangeNotifier(async () => {
    if (!provider) return null;
    // Loaded only when a provider is named: commands on the built-in ticker stay as quick as before.
    const [{ providerToNotify }, { schedulerContextFor, NOT_FIRING }] = await Promise.all([
      import('../adapters/scheduling/schedulerProviderPlugins.js'),
      import('./schedulerProviders.js'),
    ]);
    return providerToNotify({
      name: provider,
      places: { installationDir, agentHome: paths.home },
      context: schedulerContextFor(container, config, env, NOT_FIRING, logger),
    });
  }, logger);
  notifyJobChanges(container, notifier);
  return { container, settings, warnings: allWarnings, notifier, database: jobStore };
}
