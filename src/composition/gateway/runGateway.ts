import { RUNTIME_TOKENS } from '../../application/agent/ports/tokens.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startChildrenThroughLauncher } from '../../adapters/process/childProcesses.js';
import { inboundPlatformsOn } from '../../adapters/config/chatSettings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { BUILT_IN_PROVIDER_NAME } from '../../adapters/scheduling/BuiltInTickerProvider.js';
import { DispatchDueJobs } from '../../application/cron/DispatchDueJobs.js';
import { CronDeliveries } from '../../application/cron/CronDeliveries.js';
import { RefreshChannelDirectory } from '../../application/delivery/RefreshChannelDirectory.js';
import { refreshChannelsPeriodically } from './channelRefresh.js';
import type { SchedulerProvider } from '../../application/ports/SchedulerProvider.js';
import { runLine } from '../../adapters/cli/formatJobs.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { WinstonLogger, type LogFormat } from '../../adapters/logging/WinstonLogger.js';
import { agentHomeFrom, agentPathsFor } from '../../adapters/persistence/agentPaths.js';
import { displayPath } from '../../adapters/shared/displayPath.js';
import { watchStoreFile } from '../../adapters/persistence/watchStoreFile.js';
import { watchCancelRequests, watchJobStore } from '../cancelRequests.js';
import { errorText } from '../../domain/errors.js';
import { buildApplicationContainer } from '../applicationContainer.js';
import { endTracing } from '../tracing.js';
import { DEFAULT_LEASE_SECONDS, holdReplicaLease } from './replicaLease.js';
import { startFiring } from '../schedulerProviders.js';
import { gatewayFiringPath } from './firingPath.js';
import { startGatewayListener, type RunningWebhookListener } from './webhookListener.js';
import { serveAnswerLog } from './answerLogSpool.js';
import type { RunningDashboard } from './dashboardListener.js';
import { dashboardSettingsFrom } from '../../adapters/config/dashboardSettings.js';
import { fireEndpointFor } from './fireEndpoint.js';
import { FireJobSlot } from '../../application/cron/FireJobSlot.js';
import { gatewayMetrics } from './gatewayMetrics.js';
import { sendEventsOut } from './eventsOut.js';
import type { GatewayRegistration } from '../../application/ports/GatewayRegistry.js';
import { startupLines } from './startupLines.js';
import { listenerOf, publishReceiverStates, register, registrationOf } from './gatewayRegistration.js';
import { checkConfigFile, checkStartup, refusals, takeOutConfiguredCredentials, type StartupFinding } from '../startupChecks.js';
import type { HeldCredentials } from '../../adapters/system/environmentScrub.js';
import { ConfigProblemsError } from '../../adapters/config/ConfigError.js';
import { describeFileSystemProblem, ensurePrivateDirectory, errnoCode } from '../../adapters/persistence/fileSystem.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { GatewayError } from './GatewayError.js';
import { StartSteps } from './startSteps.js';

export interface GatewayOptions {
  /** The environment, credentials included; this process's own holds none (main.ts took them out). */
  env: NodeJS.ProcessEnv;
  /** The credentials taken out of this process's environment; those config.yaml names are taken out here. */
  credentials?: HeldCredentials;
  logFormat: LogFormat;
  debug: boolean;
  /** Resolves when the gateway should stop (SIGTERM, SIGINT or SIGHUP in production, or npm's exit), start-up included. */
  stopSignal: Promise<string>;
  /** Where the listening line goes. */
  out: NodeJS.WritableStream;
  /** The installed package's directory, where `plugins/cron_providers/` ships. */
  installationDir: string;
}

/**
 * `agent gateway`: the long-running process. Loads and validates the config, starts the webhook
 * listener when `platforms.webhook.enabled` is true, and runs the built-in cron trigger, which
 * starts every due job within a second whatever else runs (docs/gateway.md).
 *
 * The stop signal is heard at any moment, start-up included: claiming and accepting stop at once,
 * runs in progress get `gateway.shutdown_grace_seconds` to finish, then the rest are cancelled
 * (their process trees killed, cron jobs recorded `interrupted:`, webhook events left for the
 * next start) and the exit code (0) is returned.
 */
export async function runGateway(options: GatewayOptions): Promise<number> {
  const stopAsked = options.stopSignal;
  const steps = new StartSteps(stopAsked);
  const logger = new WinstonLogger(options.logFormat, options.debug ? 'debug' : 'info');
  const paths = agentPathsFor(agentHomeFrom(options.env));
  // The start-up check, the one `agent config check` runs too: everything it refuses, one
  // sentence a line, before anything listens or fires; what it would ignore, as warnings.
  const file = await checkConfigFile(paths, options.env);
  refuseOn(file.findings);
  // A fresh machine has no home yet: everything the gateway keeps (its registration for
  // "agent status" first) lives there.
  await makeHome(paths.home);
  const { container, settings, notifier, database } = await buildApplicationContainer(
    paths,
    options.env,
    logger,
    options.installationDir,
    false,
  );
  // Registered first, so stopped last: the spans of every run are exported before the gateway exits (docs/traces.md).
  steps.atStop('trace export', () => endTracing());
  // The variables config.yaml names as model keys leave this process's environment before any child starts.
  takeOutConfiguredCredentials(options.credentials, container.get<AgentConfig>(CONFIG_TOKENS.AgentConfig));
  // Children are forked by the launcher, a small process whose forks are cheap (docs/processes.md);
  // run from the sources, where there is no built launcher, they are forked here.
  const launcherScript = fileURLToPath(new URL('../launcher.js', import.meta.url));
  if (existsSync(launcherScript)) await startChildrenThroughLauncher(launcherScript);
  const config = container.get<AgentConfig>(CONFIG_TOKENS.AgentConfig);
  const startup = await checkStartup({
    container,
    config,
    paths,
    env: options.env,
    installationDir: options.installationDir,
    log: logger,
    credentials: options.credentials,
  });
  const findings = [...file.findings, ...startup.findings];
  refuseOn(findings);
  for (const finding of findings) logger.warn(finding.message);
  if (database) {
    // Gateways starting together take turns on an advisory lock: the schema is set up once.
    const applied = (await database.migrate()).length;
    logger.info(`store: PostgreSQL at ${database.label}${applied > 0 ? ` (${applied} schema migration(s) applied)` : ''}`, {
      database: database.label,
    });
  }
  await steps.step(
    'changes from other processes',
    () => database?.listenForChanges() ?? (() => undefined),
    (stopListening) => stopListening(),
  );
  // Bound before anything that records is resolved; null with metrics off (prom-client not loaded).
  const metrics = await gatewayMetrics(container, config);
  if (metrics) steps.atStop('event loop monitor', () => metrics.stop());
  const graceMs = config.gateway.shutdown_grace_seconds * 1000;
  // Everything this gateway starts carries its mark: once it is dead, another gateway taking over
  // its webhook events kills what it left running before running them again.
  const identity = container.get(TOKENS.ProcessIdentity);
  const orphans = container.get(TOKENS.OrphanProcesses);
  orphans.markChildrenOf(identity.claimant());
  // And what a gateway (or command) killed with -9 left running on this host, its runs'
  // grandchildren that outlived the death signal of their parents, is ended before anything runs.
  for (const [claimant, killed] of await orphans.killOrphansOfTheDead((claimant) => identity.isAlive(claimant) === false)) {
    logger.warn(`killed ${killed} process(es) left running by ${claimant}, which is gone`, { claimant });
  }
  // On a shared store, the lease comes before any claim (a webhook event's or a job's): a claim
  // of this gateway's is recovered by the others only once its lease lapsed.
  const leases = container.isBound(TOKENS.ReplicaLeases) ? container.get(TOKENS.ReplicaLeases) : null;
  const lease = leases
    ? await steps.step(
        'replica lease',
        () =>
          holdReplicaLease(
            leases,
            registrationOf(container, config, null, config.cron.provider?.trim() || BUILT_IN_PROVIDER_NAME),
            (config.database?.lease_seconds ?? DEFAULT_LEASE_SECONDS) * 1000,
            logger,
          ),
        (held) => held.release(),
      )
    : null;
  const webhooksOn = config.platforms.webhook?.enabled === true;
  const sandbox = await container.get(TOKENS.Sandbox).status();
  for (const line of startupLines(container, config, paths, webhooksOn, sandbox)) logger[line.level](line.message, line.fields);

  // The listener first: a port in use or a route without a secret stops start-up before any job runs.
  // With cron.provider managed it serves fires too, and is started for them even with webhooks off.
  const fire = fireEndpointFor(container, config, logger);
  // Chats reaching the agent: built before the listener, which serves Slack's events.
  const chat =
    inboundPlatformsOn(config, options.env).length > 0
      ? await (
          await import('./inboundChat.js')
        ).prepareInboundChat(
          container,
          config,
          options.env,
          paths,
          logger,
          database ? { store: () => database.chatStore(), lease: () => database.chatReceiverLease() } : null,
        )
      : null;
  const webhooks = await steps.step('listener', () =>
    startGatewayListener({
      container,
      config,
      settings,
      logger,
      configFile: displayPath(paths.configFile),
      fire,
      metrics,
      slackEvents: chat?.slackEvents ?? null,
      webhooksOn,
      stopAsked,
    }),
  );
  if (webhooks) await announce(webhooks.listeningLine, options, logger);
  // The dashboard, on its own listener; its code is loaded only when it is on.
  const dashboardSettings = dashboardSettingsFrom(config, options.env);
  if (dashboardSettings.enabled) {
    await steps.step(
      'dashboard',
      async (): Promise<RunningDashboard> => {
        const { startDashboard } = await import('./dashboardListener.js');
        const dashboard = await startDashboard(container, dashboardSettings, settings, logger, displayPath(paths.configFile), (onChange) =>
          watchJobStore(database, paths, onChange),
        );
        await announce(dashboard.listeningLine, options, logger);
        return dashboard;
      },
      (dashboard) => dashboard.stop(),
    );
  }
  if (metrics && !webhooks && !steps.stopping) {
    logger.warn(
      `platforms.webhook.extra.metrics is on but no listener serves GET /metrics; set platforms.webhook.enabled: true in ${displayPath(paths.configFile)}`,
    );
  }

  const dispatcher = container.get(DispatchDueJobs);
  dispatcher.onRunFinished((run) =>
    logger.info(runLine(run.job, run.report), { job: run.job.id, ...(run.report.traceId ? { trace_id: run.report.traceId } : {}) }),
  );
  // `agent cron cancel` elsewhere (another terminal, a replica's dashboard) stops the runs of this gateway.
  await steps.step(
    'cancel requests',
    () => watchCancelRequests(container, database, paths),
    (unwatch) => unwatch(),
  );
  // Cron answers a stopped gateway left waiting go to their lanes first, without running anything.
  const cronDeliveries = container.get(CronDeliveries);
  await steps.step('answers left waiting', () => cronDeliveries.resumeLeftOver());
  // The one firing path of every provider; a named provider that cannot be used
  // leaves the built-in ticker in its place, with one warning saying why.
  const fireJobSlot = container.get(FireJobSlot);
  const firing = gatewayFiringPath(dispatcher, (jobId, fireAt) => fireJobSlot.execute({ jobId, fireAt }));
  let scheduler: Promise<SchedulerProvider | null> = Promise.resolve(null);
  if (lease && webhooks) await lease.update({ listener: listenerOf(config, webhooks.port) });
  const provider = await steps.step('cron trigger', () => {
    scheduler = startFiring({
      container,
      config,
      env: options.env,
      log: logger,
      fire: firing,
      // A named provider the check found unusable was reported there; the built-in ticker replaces it.
      provider: startup.providerUsable ? config.cron.provider : undefined,
      places: { installationDir: options.installationDir, agentHome: paths.home },
      ticker: {
        kind: 'continuous',
        watchStore: (onChange) => (database ? database.watch(onChange) : watchStoreFile(paths.jobsFile, onChange)),
      },
    }).catch((error: unknown) => {
      logger.error(`the cron trigger could not start: ${errorText(error)}`);
      return null;
    });
    return Promise.race([scheduler, stopAsked.then(() => null)]);
  });
  // Jobs this gateway changes (the cronjob tool in a run) are told to the provider it runs.
  if (provider) notifier.use(provider);
  if (provider) logger.info(`cron trigger: ${provider.name}`, { provider: provider.name });
  // Before registering: a command that finds this gateway in the registry hands it its answers for the log.
  await steps.step(
    'answer log',
    () => serveAnswerLog(paths, logger),
    (stopServing) => stopServing(),
  );
  const registry = container.get(TOKENS.GatewayRegistry);
  const registration = await steps.step(
    'registration',
    () => register(container, config, webhooks?.port ?? null, provider?.name ?? 'none', chat?.receivers() ?? [], logger),
    (registered: GatewayRegistration | null) => (registered ? registry.unregister(registered) : undefined),
  );
  if (chat) {
    // `agent status` reads where each receiver stands from the registration, and from the lease on a shared store.
    await steps.step(
      'chat receiver states',
      () =>
        publishReceiverStates(
          chat,
          async (chatReceivers) => {
            if (registration) await registry.register({ ...registration, chatReceivers });
            await lease?.update({ chatReceivers });
          },
          logger,
        ),
      (states) => states.stop(),
    );
  }
  // The provider that runs may be the built-in ticker standing in for an unusable plugin.
  await steps.step('provider in the lease', () => lease?.update({ provider: provider?.name ?? 'none' }).catch(() => undefined));
  await steps.step(
    'channel directory',
    () => refreshChannelsPeriodically(container.get(RefreshChannelDirectory), logger),
    (stopRefreshing) => stopRefreshing(),
  );
  await steps.step(
    'events out',
    () => sendEventsOut(container, logger, metrics),
    (stopSending) => stopSending?.(),
  );
  if (chat) {
    // A receiver that cannot start (a refused token) says so; the rest of the gateway runs on.
    await steps.step('chat', () => chat.start().catch((error: unknown) => logger.error(`chat: ${errorText(error)}`)));
  }
  await steps.step('started', () => logger.info('gateway started', { home: paths.home, cron: provider?.name ?? 'none' }));
  // In the background: the first runs find the agent loop and the model's HTTP client loaded.
  if (!steps.stopping) void container.get(TOKENS.JobRunAgentRunner).warmUp?.();
  // What runs stops first, within the grace period, whatever step the stop came during: firing,
  // then the runs, the listener's and the deliveries, and the chat turns.
  // The MCP servers the runs used stop once no run is left (stops run last registered first).
  steps.atStop('MCP servers', () => container.get(RUNTIME_TOKENS.McpServers).close());
  steps.atStop('runs', () => stopRuns({ graceMs, logger, scheduler, dispatcher, webhooks, cronDeliveries, chat }));

  // Nothing else need keep the event loop alive: a provider plugin may hold no timer and the
  // listener may be off. The gateway runs until it is told to stop, and stops its provider then.
  const keepAlive = setInterval(() => undefined, KEEP_ALIVE_MS);
  const reason = await stopAsked;
  clearInterval(keepAlive);
  logger.info(reason.startsWith('SIG') ? `${reason} received; stopping` : `${reason}; stopping`, { grace_seconds: graceMs / 1000 });
  await steps.stopAll((name, error) => logger.warn(`could not stop the ${name}: ${errorText(error)}`));
  logger.info('gateway stopped');
  await logger.flush();
  return 0;
}

/**
 * Stops firing, then gives the runs under way the grace period: cron runs, webhook runs (the
 * listener stops taking events), the cron answers still in their lanes (what is left of the same
 * grace once no run is left) and the chat turns. What is still going then is cancelled or left
 * for the next start, each said in one line.
 */
async function stopRuns(running: {
  graceMs: number;
  logger: WinstonLogger;
  scheduler: Promise<SchedulerProvider | null>;
  dispatcher: DispatchDueJobs;
  webhooks: RunningWebhookListener | null;
  cronDeliveries: CronDeliveries;
  chat: { stop(graceMs: number): Promise<boolean> } | null;
}): Promise<void> {
  const { graceMs, logger, dispatcher, webhooks, cronDeliveries, chat } = running;
  const stoppingAt = Date.now();
  const chatFinished = chat ? chat.stop(graceMs) : Promise.resolve(true);
  await (await running.scheduler)?.stop();
  const cronStopping = dispatcher.stop(graceMs);
  const [cronFinished, webhooksFinished, deliveriesFinished] = await Promise.all([
    cronStopping,
    webhooks ? webhooks.stop(graceMs) : Promise.resolve(true),
    // Runs answering during the grace period queue their answers meanwhile: the deliveries get
    // what is left of the same grace once no run is left.
    cronStopping.then(() => cronDeliveries.stop(Math.max(0, stoppingAt + graceMs - Date.now()))),
  ]);
  if (!cronFinished) logger.warn('cron runs still going after the grace period were cancelled and recorded as interrupted');
  if (!deliveriesFinished) logger.warn('cron answers still being delivered after the grace period were left; the next start delivers them');
  if (!webhooksFinished) logger.warn('webhook runs still going after the grace period were cancelled; the next start runs them again');
  if (!(await chatFinished)) logger.warn('chat turns still going after the grace period were left; the next start answers those messages');
}

/** Creates `home` and its missing parents, 0700; one sentence when it cannot be made. */
async function makeHome(home: string): Promise<void> {
  try {
    await ensurePrivateDirectory(home);
  } catch (error) {
    throw new GatewayError(
      ERROR_CODES.GATEWAY.HOME_UNAVAILABLE,
      `The gateway cannot create its home ${home}: ${describeFileSystemProblem(errnoCode(error))}; check AGENT_HOME.`,
      { cause: error },
    );
  }
}

/** Stops start-up with every refused finding, one sentence a line, when there is one. */
function refuseOn(findings: readonly StartupFinding[]): void {
  const refused = refusals(findings);
  if (refused.length > 0) throw new ConfigProblemsError(refused);
}

/**
 * The listening line, once: in text mode on a line of its own, as it is (what scripts wait
 * for); with `--log-format json` as a log entry, so that every line on stdout is JSON.
 */
async function announce(line: string, options: GatewayOptions, logger: WinstonLogger): Promise<void> {
  if (options.logFormat === 'json') {
    logger.info(line);
    return;
  }
  // Lines logged while starting come first.
  await logger.flush();
  options.out.write(`${line}\n`);
}

/** The longest a Node timer waits: the keep-alive never needs to fire. */
const KEEP_ALIVE_MS = 2 ** 31 - 1;
