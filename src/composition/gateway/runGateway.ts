import { RunDueJobs } from '../../application/cron/RunDueJobs.js';
import { RefreshChannelDirectory } from '../../application/delivery/RefreshChannelDirectory.js';
import { NextScheduledRun } from '../../application/cron/NextScheduledRun.js';
import { tickLines } from '../../adapters/cli/formatJobs.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { WinstonLogger, type LogFormat } from '../../adapters/logging/WinstonLogger.js';
import { agentHomeFrom, agentPathsFor } from '../../adapters/persistence/agentPaths.js';
import { GatewayCronTrigger } from '../../adapters/scheduling/GatewayCronTrigger.js';
import { displayPath } from '../../adapters/shared/displayPath.js';
import { errorText } from '../../domain/errors.js';
import { buildCronContainer } from '../cronContainer.js';
import { startWebhookListener } from './webhookListener.js';

export interface GatewayOptions {
  env: NodeJS.ProcessEnv;
  logFormat: LogFormat;
  debug: boolean;
  /** Resolves when the gateway should stop (SIGTERM or SIGINT in production). */
  stopSignal: Promise<string>;
  /** Where the listening line goes. */
  out: NodeJS.WritableStream;
}

/** How long runs in progress may take to finish once a stop was asked for. */
export const SHUTDOWN_GRACE_MS = 30_000;

/**
 * `agent gateway`: the long-running process. Loads and validates the config, starts the webhook
 * listener when `platforms.webhook.enabled` is true, and runs the built-in cron trigger (a tick
 * every minute plus a timer for the earliest due job). On the stop signal it stops accepting,
 * lets runs in progress finish for up to 30 s and returns the exit code (0).
 */
export async function runGateway(options: GatewayOptions): Promise<number> {
  const logger = new WinstonLogger(options.logFormat, options.debug ? 'debug' : 'info');
  const paths = agentPathsFor(agentHomeFrom(options.env));
  const { container, settings } = buildCronContainer(paths, options.env, logger);
  const config = container.get<AgentConfig>(CONFIG_TOKENS.AgentConfig);
  warnAboutSchedulerProvider(config, logger);
  // The listener first: a port in use or a route without a secret stops start-up before any job runs.
  const webhooks =
    config.platforms.webhook?.enabled === true
      ? await startWebhookListener(container, config, settings, logger, displayPath(paths.configFile))
      : null;
  if (webhooks) {
    // Lines logged while starting come first.
    await logger.flush();
    options.out.write(`${webhooks.listeningLine}\n`);
    logger.info(webhooks.listeningLine);
  }

  const runDueJobs = container.get(RunDueJobs);
  const nextRun = container.get(NextScheduledRun);
  const trigger = new GatewayCronTrigger(
    async () => {
      const report = await runDueJobs.execute();
      for (const line of tickLines(report)) logger.info(line);
    },
    () => nextRun.execute(),
    logger,
  );

  await trigger.start();
  const stopRefreshingChannels = refreshChannelsPeriodically(container.get(RefreshChannelDirectory), logger);
  logger.info('gateway started', { home: paths.home, cron: 'built-in ticker' });

  const signal = await options.stopSignal;
  logger.info(`${signal} received; stopping`, { grace_seconds: SHUTDOWN_GRACE_MS / 1000 });
  stopRefreshingChannels();
  const [cronFinished, webhooksFinished] = await Promise.all([
    trigger.stop(SHUTDOWN_GRACE_MS),
    webhooks ? webhooks.stop(SHUTDOWN_GRACE_MS) : Promise.resolve(true),
  ]);
  const finished = cronFinished && webhooksFinished;
  if (!finished) logger.warn('runs still in progress after the grace period were abandoned; the next start recovers them');
  logger.info('gateway stopped');
  await logger.flush();
  return 0;
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
