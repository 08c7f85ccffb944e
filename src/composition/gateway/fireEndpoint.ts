import type { Container } from 'inversify';
import { FireJobSlot } from '../../application/cron/FireJobSlot.js';
import type { Logger } from '../../application/ports/Logger.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { webhookListenerAddress } from '../../adapters/config/webhookSettings.js';
import { createFireApp, type FireRouteDependencies } from '../../adapters/http/fireApp.js';
import { closeWebhookServer, createWebhookServer } from '../../adapters/http/webhookServer.js';
import { JwtFireTokenVerifier } from '../../adapters/security/JwtFireTokenVerifier.js';
import { listenOrExplain } from './webhookListener.js';
import type { GatewayMetrics } from './gatewayMetrics.js';

/**
 * What `POST /api/cron/fire` needs, when it is served: with `cron.provider: managed` and the
 * `cron.managed` keys that check a fire token. Without those keys there is nothing to trust a
 * fire with: the endpoint is not served (the provider's own fallback warning names the key).
 */
export function fireEndpointFor(container: Container, config: AgentConfig, logger: Logger): FireRouteDependencies | null {
  if (config.cron.provider?.trim() !== 'managed') return null;
  const { portal_url: issuer, expected_audience: audience, jwks_url: jwksUrl } = config.cron.managed ?? {};
  if (!issuer || !audience || !jwksUrl) return null;
  const fire = container.get(FireJobSlot);
  return {
    verifier: new JwtFireTokenVerifier(
      { jwksUrl, audience, issuer },
      container.get(TOKENS.Clock),
      logger,
      container.get(TOKENS.UsedFireTokens),
    ),
    fire: { execute: (input) => fire.execute(input) },
    logger,
  };
}

export interface RunningFireListener {
  listeningLine: string;
  port: number;
  /** Stops taking connections; resolves once every request has been answered. */
  stop(): Promise<void>;
}

/**
 * The gateway's HTTP listener when webhooks are off but fires are served: the
 * same address (`platforms.webhook.extra.host`/`port`) and connection limits as the webhook one;
 * with `metrics`, it serves `GET /metrics` too.
 */
export async function startFireListener(
  config: AgentConfig,
  fire: FireRouteDependencies,
  configFile: string,
  metrics: GatewayMetrics | null = null,
): Promise<RunningFireListener> {
  const address = webhookListenerAddress(config);
  const server = createWebhookServer(createFireApp(fire, metrics?.endpoint));
  const bound = await listenOrExplain(server, address.host, address.port, configFile, 'The fire endpoint');
  return {
    listeningLine: `fire endpoint listening on ${address.host}:${bound} — POST /api/cron/fire`,
    port: bound,
    stop: () => closeWebhookServer(server),
  };
}
