import { AppError } from '../../domain/errors.js';
import type { CronSettings, WebhookWorkerSettings } from '../../application/ports/Settings.js';
import type { AgentConfig } from './AgentConfig.js';
import { describeValue } from './YamlConfigLoader.js';

/** Spec "Webhook route": the listener's defaults. */
export const DEFAULT_WEBHOOK_HOST = '0.0.0.0';
export const DEFAULT_WEBHOOK_PORT = 8644;
/** Decisions §7: runs of accepted events at once. */
export const DEFAULT_MAX_CONCURRENT_RUNS = 4;
/** Decisions §7: webhook run records kept per route. */
export const DEFAULT_WEBHOOK_OUTPUT_RETENTION = 50;
/** The worker looks at the inbox this often when no accept told it about a new event. */
export const WEBHOOK_POLL_INTERVAL_MS = 1000;

/** Where the listener binds (`platforms.webhook.extra.host` and `.port`). */
export interface WebhookListenerAddress {
  host: string;
  port: number;
}

/** `platforms.webhook.extra` as written; `{}` when absent. */
export function webhookExtra(config: Pick<AgentConfig, 'platforms'>): Record<string, unknown> {
  return config.platforms.webhook?.extra ?? {};
}

function invalid(configFile: string, key: string, expected: string, value: unknown): AppError {
  return new AppError('CONFIG.INVALID', `${configFile}: platforms.webhook.extra.${key} ${expected} (got ${describeValue(value)}).`);
}

/** `extra.host` (default 0.0.0.0) and `extra.port` (default 8644). Throws CONFIG.INVALID naming the key. */
export function webhookListenerAddress(config: Pick<AgentConfig, 'platforms'>, configFile = 'config.yaml'): WebhookListenerAddress {
  const { host = DEFAULT_WEBHOOK_HOST, port = DEFAULT_WEBHOOK_PORT } = webhookExtra(config);
  if (typeof host !== 'string' || host.trim() === '') throw invalid(configFile, 'host', 'must be a host name or IP address', host);
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw invalid(configFile, 'port', 'must be a port number from 0 to 65535', port);
  }
  return { host: host.trim(), port };
}

/** What the webhook worker needs: `extra.max_concurrent_runs` and the agent settings cron runs use too. */
export function webhookWorkerSettingsFrom(
  config: Pick<AgentConfig, 'platforms'>,
  cron: Pick<CronSettings, 'idleTimeoutMs' | 'defaultModel'>,
  configFile = 'config.yaml',
): WebhookWorkerSettings {
  const { max_concurrent_runs: runs = DEFAULT_MAX_CONCURRENT_RUNS } = webhookExtra(config);
  if (typeof runs !== 'number' || !Number.isInteger(runs) || runs < 1) {
    throw invalid(configFile, 'max_concurrent_runs', 'must be a whole number of 1 or more', runs);
  }
  return {
    maxConcurrentRuns: runs,
    idleTimeoutMs: cron.idleTimeoutMs,
    defaultModel: cron.defaultModel,
    pollIntervalMs: WEBHOOK_POLL_INTERVAL_MS,
  };
}

/** `extra.output_retention` (default 50): run records kept per route. Throws CONFIG.INVALID naming the key. */
export function webhookOutputRetention(config: Pick<AgentConfig, 'platforms'>, configFile = 'config.yaml'): number {
  const { output_retention: keep = DEFAULT_WEBHOOK_OUTPUT_RETENTION } = webhookExtra(config);
  if (typeof keep !== 'number' || !Number.isInteger(keep) || keep < 1) {
    throw invalid(configFile, 'output_retention', 'must be a whole number of 1 or more', keep);
  }
  return keep;
}

/** `GET /metrics` on the listener: `extra.metrics` (default off) and `extra.metrics_token`, the bearer token it then requires. */
export interface WebhookMetricsSettings {
  enabled: boolean;
  token: string | null;
}

/** `extra.metrics` and `extra.metrics_token`. Throws CONFIG.INVALID naming the key. */
export function webhookMetricsSettings(config: Pick<AgentConfig, 'platforms'>, configFile = 'config.yaml'): WebhookMetricsSettings {
  const { metrics = false, metrics_token: token } = webhookExtra(config);
  if (typeof metrics !== 'boolean') throw invalid(configFile, 'metrics', 'must be true or false', metrics);
  if (token !== undefined && token !== null && (typeof token !== 'string' || token.trim() === '')) {
    throw invalid(configFile, 'metrics_token', 'must be a non-empty string, the bearer token scrapers send', token);
  }
  return { enabled: metrics, token: typeof token === 'string' ? token.trim() : null };
}

/** Whether `agent gateway` starts the webhook listener (`platforms.webhook.enabled: true`). */
export function webhookListenerEnabled(config: Pick<AgentConfig, 'platforms'>): boolean {
  return config.platforms.webhook?.enabled === true;
}

/** Whether a bind address only this machine can reach: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return bare === 'localhost' || bare === '::1' || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(bare);
}

/**
 * The URL of a route on this machine's listener: a wildcard bind address (0.0.0.0, ::) is shown
 * as the loopback address, which reaches it and which a person can paste.
 */
export function localWebhookUrl(address: WebhookListenerAddress, routeName: string): string {
  const host = address.host === '0.0.0.0' ? '127.0.0.1' : address.host === '::' || address.host === '[::]' ? '::1' : address.host;
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${shownHost}:${address.port}/webhooks/${encodeURIComponent(routeName)}`;
}
