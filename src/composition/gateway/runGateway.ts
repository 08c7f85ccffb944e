import { TOKENS } from '../../application/ports/tokens.js';
import { DispatchDueJobs } from '../../application/cron/DispatchDueJobs.js';
import { RefreshChannelDirectory } from '../../application/delivery/RefreshChannelDirectory.js';
import { NextScheduledRun } from '../../application/cron/NextScheduledRun.js';
import { runLine } from '../../adapters/cli/formatJobs.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { WinstonLogger, type LogFormat } from '../../adapters/logging/WinstonLogger.js';
import { agentHomeFrom, agentPathsFor } from '../../adapters/persistence/agentPaths.js';
import { GatewayCronTrigger } from '../../adapters/scheduling/GatewayCronTrigger.js';
import { displayPath } from '../../adapters/shared/displayPath.js';
import { watchStoreFile } from '../../adapters/persistence/watchStoreFile.js';
import { errorText } from '../../domain/errors.js';
import { buildCronContainer } from '../cronContainer.js';
import { startWebhookListener, type RunningWebhookListener } from './webhookListener.js';

export interface GatewayOptions {
  env: NodeJS.ProcessEnv;
  logFormat: LogFormat;
  debug: boolean;
  /** Resolves when the gateway should stop (SIGTERM or SIGINT in production), start-up included. */
  stopSignal: Promise<string>;
  /** Where the listening line goes. */
  out: NodeJS.WritableStream;
}

/**
 * `agent gateway`: the long-running process. Loads and validates the config, starts the webhook
 * listener when `platforms.webhook.enabled` is true, and runs the built-in cron trigger, which
 * starts every due job within a second whatever else runs (decisions §4a).
 *
 * The stop signal is heard at any moment, start-up included: claiming and accepting stop at once,
 * runs in progress get `gateway.shutdown_grace_seconds` to finish, then the rest are cancelled
 * (their process trees killed, cron jobs recorded `interrupted:`, webhook events left for the
 * next start) and the exit code (0) is returned.
 */
export async function runGateway(options: GatewayOptions): Promise<number> {
  let signal: string | null = null;
  const stopAsked = options.stopSignal.then((name) => (signal = name));
  const logger = new WinstonLogger(options.logFormat, options.debug ? 'debug' : 'info');
  const paths = agentPathsFor(agentHomeFrom(options.env));
  const { container, settings } = buildCronContainer(paths, options.env, logger);
  const config = container.get<AgentConfig>(CONFIG_TOKENS.AgentConfig);
  const graceMs = config.gateway.shutdown_grace_seconds * 1000;
  warnAboutSchedulerProvider(config, logger);
  // Everything this gateway starts carries its mark: once it is dead, another gateway taking over
  // its webhook events kills what it left running before running them again.
  container.get(TOKENS.OrphanProcesses).markChildrenOf(container.get(TOKENS.ProcessIdentity).claimant());

  // The listener first: a port in use or a route without a secret stops start-up before any job runs.
  let webhooks: RunningWebhookListener | null = null;
  if (config.platforms.webhook?.enabled === true) {
    const starting = startWebhookListener(container, config, settings, logger, displayPath(paths.configFile));
    webhooks = await Promise.race([starting, stopAsked.then(() => null)]);
    // Stopped while it was starting: it stops as soon as it has started.
    if (!webhooks) void starting.then((listener) => listener.stop(0), () => undefined);
  }
  if (webhooks) await announce(webhooks.listeningLine, options, logger);

  const dispatcher = container.get(DispatchDueJobs);
  dispatcher.onRunFinished((run) => logger.info(runLine(run.job, run.report), { job: run.job.id }));
  const nextRun = container.get(NextScheduledRun);
  const trigger = new GatewayCronTrigger(
    {
      dispatch: () => dispatcher.dispatch(),
      nextRunAt: (after) => nextRun.execute(after),
      watchStore: (onChange) => watchStoreFile(paths.jobsFile, onChange),
      onRunFinished: (listener) => dispatcher.onRunFinished(listener),
    },
    logger,
  );
  let stopRefreshingChannels = () => {};
  if (signal === null) {
    await Promise.race([trigger.start(), stopAsked]);
    stopRefreshingChannels = refreshChannelsPeriodically(container.get(RefreshChannelDirectory), logger);
    if (signal === null) logger.info('gateway started', { home: paths.home, cron: 'built-in ticker' });
  }

  await stopAsked;
  logger.info(`${signal} received; stopping`, { grace_seconds: graceMs / 1000 });
  stopRefreshingChannels();
  await trigger.stop();
  const [cronFinished, webhooksFinished] = await Promise.all([
    dispatcher.stop(graceMs),
    webhooks ? webhooks.stop(graceMs) : Promise.resolve(true),
  ]);
  if (!cronFinished) logger.warn('cron runs still going after the grace period were cancelled and recorded as interrupted');
  if (!webhooksFinished) logger.warn('webhook runs still going after the grace period were cancelled; the next start runs them again');
  logger.info('gateway stopped');
  await logger.flush();
  return 0;
}

/**
 * The listening line (decisions §7): in text mode on its own line as well as in the log; with
 * `--log-format json` only as a log entry, so that every line on stdout is JSON.
 */
async function announce(line: string, options: GatewayOptions, logger: WinstonLogger): Promise<void> {
  if (options.logFormat === 'text') {
    // Lines logged while starting come first.
    await logger.flush();
    options.out.write(`${line}\n`);
  }
  logger.info(line);
}

/** How often the channel directory is rebuilt from the platforms (decisions §10). */
export const CHANNEL_REFRESH_MS = 5 * 60_000;

/**
 * Builds the channel directory now, in the background (start-up does not wait for the platforms),
 * and again every 5 minutes. A refresh that fails is logged by the use case; the next one tries again.
 */
function refreshChannelsPeriodically(refresh: RefreshChannelDirectory, logger: WinstonLogger): () => void {
  const run = () => void refresh.execute().catch((error: unknown) => logger.warn(`could not refresh the channel directory: ${errorText(error)}`));
  run();
  const timer = setInterval(run, CHANNEL_REFRESH_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Only the built-in ticker ships in this version; a named provider that is not available means
 * the built-in one is used, with a warning (service-spec "Provider selection").
 */
function warnAboutSchedulerProvider(config: AgentConfig, logger: WinstonLogger): void {
  const provider = config.cron.provider?.trim();
  if (provider) {
    logger.warn(`cron.provider "${provider}" is not available in this installation; using the built-in ticker`);
  }
}
