import type { WebhookWorkerSettings } from '../../src/application/ports/Settings.js';

/** The webhook worker's settings as a gateway has them by default, with an agent run by `command` and a slow poll (the tests notify the worker). */
export const WEBHOOK_WORKER_SETTINGS: WebhookWorkerSettings = {
  maxConcurrentRuns: 4,
  maxConcurrentDeliveries: 2,
  idleTimeoutMs: 600_000,
  defaultModel: { provider: 'command', model: null },
  pollIntervalMs: 60_000,
};
