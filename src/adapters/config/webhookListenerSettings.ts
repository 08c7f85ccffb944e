import { AppError } from '../../domain/errors.js';
import {
  DEFAULT_WEBHOOK_LISTENER_SETTINGS,
  type WebhookListenerSettings,
} from '../../application/ports/WebhookSettings.js';
import type { AgentConfig } from './AgentConfig.js';
import { webhookExtra } from './webhookSettings.js';
import { describeValue } from './YamlConfigLoader.js';

/** `extra.rate_limit` (default 30 per minute per route) and `extra.max_body_bytes` (default 1 MiB). Throws CONFIG.INVALID naming the key. */
export function webhookListenerSettingsFrom(
  config: Pick<AgentConfig, 'platforms'>,
  configFile = 'config.yaml',
): WebhookListenerSettings {
  const extra = webhookExtra(config);
  const positive = (key: string, fallback: number): number => {
    const value = extra[key] ?? fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      throw new AppError(
        'CONFIG.INVALID',
        `${configFile}: platforms.webhook.extra.${key} must be a whole number of 1 or more (got ${describeValue(value)}).`,
      );
    }
    return value;
  };
  return {
    ...DEFAULT_WEBHOOK_LISTENER_SETTINGS,
    rateLimitPerMinute: positive('rate_limit', DEFAULT_WEBHOOK_LISTENER_SETTINGS.rateLimitPerMinute),
    maxBodyBytes: positive('max_body_bytes', DEFAULT_WEBHOOK_LISTENER_SETTINGS.maxBodyBytes),
  };
}
