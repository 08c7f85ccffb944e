import { defaultRunSlots } from './concurrencySettings.js';
import type { CronSettings, WebhookWorkerSettings } from '../../application/ports/Settings.js';
import { DEFAULT_WEBHOOK_LISTENER_SETTINGS, type WebhookListenerSettings } from '../../application/ports/WebhookSettings.js';
import type { AgentConfig, WebhookExtraConfig } from './AgentConfig.js';

/*
 * The readers of `platforms.webhook.extra`. The loader has already checked every value against
 * the schema (configSchema.ts: one check, with the file and the key in its errors); these only
 * fill in the defaults.
 */

/** The listener's defaults (docs/webhooks.md, Configuration). */
export const DEFAULT_WEBHOOK_HOST = '0.0.0.0';
export const DEFAULT_WEBHOOK_PORT = 8644;
/** Deliveries under way at once to one platform (`extra.max_concurrent_deliveries`). */
export const DEFAULT_MAX_CONCURRENT_DELIVERIES = 2;
/** Webhook run records kept per route (`extra.output_retention`). */
export const DEFAULT_WEBHOOK_OUTPUT_RETENTION = 50;
/** The worker looks at the inbox this often when no accept told it about a new event. */
export const WEBHOOK_POLL_INTERVAL_MS = 1000;

/** Where the listener binds (`platforms.webhook.extra.host` and `.port`). */
export interface WebhookListenerAddress {
  host: string;
  port: number;
}

/** `platforms.webhook.extra` as loaded; `{}` when absent. */
export function webhookExtra(config: Pick<AgentConfig, 'platforms'>): WebhookExtraConfig {
  return config.platforms.webhook?.extra ?? {};
}

/** `extra.host` (default 0.0.0.0) and `extra.port` (default 8644). */
export function webhookListenerAddress(config: Pick<AgentConfig, 'platforms'>): WebhookListenerAddress {
  const { host = DEFAULT_WEBHOOK_HOST, port = DEFAULT_WEBHOOK_PORT } = webhookExtra(config);
  return { host, port };
}

/** `extra.rate_limit` (default 30 per minute per route) and `extra.max_body_bytes` (default 1 MiB). */
export function webhookListenerSettingsFrom(config: Pick<AgentConfig, 'platforms'>): WebhookListenerSettings {
  const extra = webhookExtra(config);
  return {
    ...DEFAULT_WEBHOOK_LISTENER_SETTINGS,
    rateLimitPerMinute: extra.rate_limit ?? DEFAULT_WEBHOOK_LISTENER_SETTINGS.rateLimitPerMinute,
    maxBodyBytes: extra.max_body_bytes ?? DEFAULT_WEBHOOK_LISTENER_SETTINGS.maxBodyBytes,
  };
}

/**
 * What the webhook worker needs: `extra.max_concurrent_runs` (default: 4 when the agent is a
 * command, else `agent.max_concurrent_sessions`; concurrencySettings.ts),
 * `extra.max_concurrent_deliveries` (per platform, default 2) and the agent settings cron runs use too.
 */
export function webhookWorkerSettingsFrom(
  config: Pick<AgentConfig, 'platforms' | 'agent' | 'model' | 'providers'>,
  cron: Pick<CronSettings, 'idleTimeoutMs' | 'defaultModel' | 'maxCostPerDay'>,
): WebhookWorkerSettings {
  return {
    maxConcurrentRuns: webhookExtra(config).max_concurrent_runs ?? defaultRunSlots(config),
    maxConcurrentDeliveries: webhookExtra(config).max_concurrent_deliveries ?? DEFAULT_MAX_CONCURRENT_DELIVERIES,
    idleTimeoutMs: cron.idleTimeoutMs,
    defaultModel: cron.defaultModel,
    pollIntervalMs: WEBHOOK_POLL_INTERVAL_MS,
    ...(cron.maxCostPerDay != null ? { maxCostPerDay: cron.maxCostPerDay } : {}),
  };
}

/** `extra.output_retention` (default 50): run records kept per route. */
export function webhookOutputRetention(config: Pick<AgentConfig, 'platforms'>): number {
  return webhookExtra(config).output_retention ?? DEFAULT_WEBHOOK_OUTPUT_RETENTION;
}

/** `GET /metrics` on the listener: `extra.metrics` (default off) and `extra.metrics_token`, the bearer token it then requires. */
export interface WebhookMetricsSettings {
  enabled: boolean;
  token: string | null;
}

/** `extra.metrics` and `extra.metrics_token`. */
export function webhookMetricsSettings(config: Pick<AgentConfig, 'platforms'>): WebhookMetricsSettings {
  const { metrics = false, metrics_token: token = null } = webhookExtra(config);
  return { enabled: metrics, token };
}

/**
 * Why config.yaml must not be run as it stands, or null: `extra.metrics: true` without
 * `extra.metrics_token` while the listener (the webhook one, or the fire endpoint's, which binds
 * the same address) is not bound to a loopback address, so that anyone who reaches it would read
 * the metrics. The gateway refuses to start with this sentence; `agent config check` reports it.
 */
export function openMetricsProblem(config: Pick<AgentConfig, 'platforms'>, configFile: string): string | null {
  const { enabled, token } = webhookMetricsSettings(config);
  const { host } = webhookListenerAddress(config);
  if (!enabled || token !== null || isLoopbackHost(host)) return null;
  return (
    `${configFile}: platforms.webhook.extra.metrics is true without platforms.webhook.extra.metrics_token, which is refused ` +
    `unless the listener is bound to a loopback address (platforms.webhook.extra.host is ${host}); ` +
    'set platforms.webhook.extra.metrics_token, or bind the listener to a loopback host by setting platforms.webhook.extra.host to 127.0.0.1.'
  );
}

/** Whether `agent gateway` starts the webhook listener (`platforms.webhook.enabled: true`). */
export function webhookListenerEnabled(config: Pick<AgentConfig, 'platforms'>): boolean {
  return config.platforms.webhook?.enabled === true;
}

/** Whether a bind address only this machine can reach: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
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
