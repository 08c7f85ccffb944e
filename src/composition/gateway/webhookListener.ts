import type { Router } from 'express';
import { AsyncResource } from 'node:async_hooks';
import type { Server } from 'node:http';
import type { Container } from 'inversify';
import type { Logger } from '../../application/ports/Logger.js';
import type { CronSettings } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { AcceptWebhook } from '../../application/webhook/AcceptWebhook.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { ConfiguredWebhookRoutes } from '../../adapters/config/ConfiguredWebhookRoutes.js';
import { webhookListenerAddress, webhookListenerSettingsFrom, webhookWorkerSettingsFrom } from '../../adapters/config/webhookSettings.js';
import type { FireRouteDependencies } from '../../adapters/http/fireApp.js';
import { createWebhookApp } from '../../adapters/http/webhookApp.js';
import { closeWebhookServer, createWebhookServer, listenWebhookServer } from '../../adapters/http/webhookServer.js';
import { WebhookWorker } from '../../adapters/webhook/WebhookWorker.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { webhookModule } from '../modules/webhookModule.js';
import { GatewayError } from './GatewayError.js';
import { startFireListener } from './fireEndpoint.js';
import type { GatewayMetrics } from './gatewayMetrics.js';

export interface RunningWebhookListener {
  /** The line the gateway prints once it listens (`webhook listening on …`). */
  listeningLine: string;
  port: number;
  /** Stops accepting at once; returns when runs in progress ended or `graceMs` passed. */
  stop(graceMs: number): Promise<boolean>;
}

/**
 * The gateway's listener: the webhook platform's when it is on (with fires and `/metrics` on
 * it), else the fire endpoint's alone when `cron.provider` is managed, else none. Stopped while
 * it was starting, it stops as soon as it has started, and null is returned.
 */
export async function startGatewayListener(options: {
  container: Container;
  config: AgentConfig;
  settings: CronSettings;
  logger: Logger;
  configFile: string;
  fire: FireRouteDependencies | null;
  metrics: GatewayMetrics | null;
  slackEvents: Router | null;
  webhooksOn: boolean;
  stopAsked: Promise<unknown>;
}): Promise<RunningWebhookListener | null> {
  const { config, fire, metrics, stopAsked } = options;
  if (options.webhooksOn) {
    const starting = startWebhookListener(
      options.container,
      config,
      options.settings,
      options.logger,
      options.configFile,
      fire,
      metrics,
      options.slackEvents,
    );
    const started = await Promise.race([starting, stopAsked.then(() => null)]);
    if (!started)
      void starting.then(
        (listener) => listener.stop(0),
        () => undefined,
      );
    return started;
  }
  if (!fire) return null;
  const starting = startFireListener(config, fire, options.configFile, metrics);
  const fires = await Promise.race([starting, stopAsked.then(() => null)]);
  if (!fires) {
    void starting.then(
      (listener) => listener.stop(),
      () => undefined,
    );
    return null;
  }
  return { ...fires, stop: () => fires.stop().then(() => true) };
}

/**
 * Starts the webhook platform in `container` (whose config passed the start-up check): recovers
 * and starts the worker, and listens; with `fire`, the same listener serves `POST /api/cron/fire`, with
 * `metrics`, `GET /metrics`. A port in use is a GatewayError naming the port and the config key.
 */
export async function startWebhookListener(
  container: Container,
  config: AgentConfig,
  cron: CronSettings,
  logger: Logger,
  configFile: string,
  fire: FireRouteDependencies | null = null,
  metrics: GatewayMetrics | null = null,
  /** Slack's Events API (`POST /slack/events`), when Slack receiving is on. */
  slackEvents: Router | null = null,
): Promise<RunningWebhookListener> {
  const address = webhookListenerAddress(config);
  const listener = webhookListenerSettingsFrom(config);
  container.load(webhookModule({ listener, worker: webhookWorkerSettingsFrom(config, cron) }));
  // Checked already, with everything else the gateway checks before it listens (startupChecks.ts).
  const routes = container.get(ConfiguredWebhookRoutes);
  const worker = container.get(WebhookWorker);
  const accept = container.get(AcceptWebhook);
  const inbox = container.get(TOKENS.WebhookInbox);
  metrics?.watchInboxBacklog(() => inbox.pending());
  // Recovers what an earlier run left unfinished (the worker logs how many) and starts draining.
  await worker.start();
  const tracing = container.isBound(TOKENS.RunTracing) ? container.get(TOKENS.RunTracing) : null;
  // With traces, the worker is woken in the context of this start, not in the request's trace:
  // what it does next (other events' claims, their completion) is no part of that request.
  const wakeWorker = tracing ? AsyncResource.bind(() => void worker.notify()) : () => void worker.notify();

  const app = createWebhookApp({
    routes,
    acceptWebhook: {
      execute: async (input) => {
        const outcome = await accept.execute(input);
        // Start the run at once instead of at the worker's next poll.
        if (outcome.kind === 'accepted') wakeWorker();
        return outcome;
      },
    },
    settings: listener,
    logger,
    ...(fire ? { fire } : {}),
    ...(slackEvents ? { slackEvents } : {}),
    ...(metrics ? { metricsEndpoint: metrics.endpoint, metrics: container.get(TOKENS.Metrics) } : {}),
    ...(tracing ? { tracing } : {}),
  });
  const server = createWebhookServer(app);
  const bound = await listenOrExplain(server, address.host, address.port, configFile);
  const names = (await routes.all()).map((route) => route.name);
  return {
    listeningLine: `webhook listening on ${address.host}:${bound} — routes: ${names.length > 0 ? names.join(', ') : '(none)'}`,
    port: bound,
    stop: async (graceMs) => {
      const [, finished] = await Promise.all([closeWebhookServer(server), worker.stop(graceMs)]);
      await container.get(TOKENS.WebhookInbox).close();
      return finished;
    },
  };
}

/**
 * Binds `server` (`what` names it in errors); a port in use is GATEWAY.PORT_IN_USE naming the
 * port and the config key (under `keys`), any other failure GATEWAY.LISTEN_FAILED.
 */
export async function listenOrExplain(
  server: Server,
  host: string,
  port: number,
  configFile: string,
  what = 'The webhook listener',
  keys = 'platforms.webhook.extra',
): Promise<number> {
  try {
    return (await listenWebhookServer(server, host, port)).port;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new GatewayError(
        ERROR_CODES.GATEWAY.PORT_IN_USE,
        `Port ${port} on ${host} is already in use; stop the program using it or set ${keys}.port in ${configFile} to a free port.`,
      );
    }
    throw new GatewayError(
      ERROR_CODES.GATEWAY.LISTEN_FAILED,
      `${what} could not listen on ${host}:${port} (${code ?? String(error)}); check ${keys}.host and .port in ${configFile}.`,
      { cause: error },
    );
  }
}
