import type { Container } from 'inversify';
import { TOKENS } from '../../application/ports/tokens.js';
import type { AgentConfig } from '../../adapters/config/AgentConfig.js';
import { webhookMetricsSettings } from '../../adapters/config/webhookSettings.js';
import type { MetricsEndpoint } from '../../adapters/http/metricsRoute.js';

/** `GET /metrics` as the gateway serves it, and where the inbox backlog is read from once the inbox is open. */
export interface GatewayMetrics {
  endpoint: MetricsEndpoint;
  watchInboxBacklog(read: () => Promise<number>): void;
  /** Where the count of undeliverable events out is read from, once the gateway sends them. */
  watchFailedEvents(read: () => Promise<number>): void;
  /** Stops sampling the event loop's delay, at shutdown. */
  stop(): void;
}

/**
 * With `platforms.webhook.extra.metrics: true`, loads prom-client (only then: every other process
 * stays as quick to start as before) and binds the Metrics port in `container`, before any use
 * case that records is resolved, and starts sampling the event loop's delay
 * (`agent_event_loop_delay_seconds`) until `stop`. Null with metrics off. Metrics without a token on a listener
 * others can reach never get here: the start-up check (startupChecks.ts) refuses them first.
 */
export async function gatewayMetrics(container: Container, config: AgentConfig): Promise<GatewayMetrics | null> {
  const settings = webhookMetricsSettings(config);
  if (!settings.enabled) return null;
  const { PrometheusMetrics } = await import('../../adapters/metrics/PrometheusMetrics.js');
  const metrics = new PrometheusMetrics();
  container.bind(TOKENS.Metrics).toConstantValue(metrics);
  metrics.startEventLoopMonitor();
  return {
    endpoint: { exposition: metrics, token: settings.token },
    watchInboxBacklog: (read) => metrics.watchInboxBacklog(read),
    watchFailedEvents: (read) => metrics.watchFailedEvents(read),
    stop: () => metrics.stopEventLoopMonitor(),
  };
}
