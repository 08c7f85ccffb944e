/** The listener settings of `platforms.webhook.extra` that the accept path needs. */
export interface WebhookListenerSettings {
  /** `extra.rate_limit`: requests per minute, per route (default 30). */
  rateLimitPerMinute: number;
  /** `extra.max_body_bytes`: largest body taken, in bytes (default 1048576). */
  maxBodyBytes: number;
  /** How long a request may take to send its body, in milliseconds (default 10 s). */
  bodyReadTimeoutMs: number;
}

export const DEFAULT_WEBHOOK_LISTENER_SETTINGS: Readonly<WebhookListenerSettings> = {
  rateLimitPerMinute: 30,
  maxBodyBytes: 1_048_576,
  bodyReadTimeoutMs: 10_000,
};
