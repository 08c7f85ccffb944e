import type { Container } from 'inversify';
import { TOKENS } from '../../application/ports/tokens.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { ConfigError } from '../../adapters/config/ConfigError.js';
import { openMetricsProblem, webhookMetricsSettings } from '../../adapters/config/webhookSettings.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import type { MetricsEndpoint } from '../../adapters/http/metricsRoute.js';

/** `GET /metrics` as the gateway serves it, and where the inbox backlog is read from once the inbox is open. */
export interface GatewayMetrics {
  endpoint: MetricsEndpoint;
  watchInboxBacklog(read: () => Promise<number>): void;
}

/**
 * With `platforms.webhook.extra.metrics: true`, loads prom-client (only then: every other process
 * stays as quick to start as before) and binds the Metrics port in `container`, before any use
 * case that records is resolved. Null with metrics off. Metrics without a token on a listener
 * others can reach stop start-up here (CONFIG.INVALID), before anything listens or runs.
 */
export async function gatewayMetrics(container: Container, config: AgentConfig, configFile: string): Promise<GatewayMetrics | null> {
  const settings = webhookMetricsSettings(config);
  if (!settings.enabled) return null;
  const open = openMetricsProblem(config, configFile);
  if (open !== null) throw new ConfigError(ERROR_CODES.CONFIG.INVALID, open);
  const { PrometheusMetrics } = await import('../../adapters/metrics/PrometheusMetrics.js');
  const metrics = new PrometheusMetrics();
  container.bind(TOKENS.Metrics).toConstantValue(metrics);
  return {
    endpoint: { exposition: metrics, token: settings.token },
    watchInboxBacklog: (read) => metrics.watchInboxBacklog(read),
  };
}
