import type { TokenCounts } from '../../domain/runs/usage.js';

/** Which run path a run went through. */
export type RunKind = 'cron' | 'webhook';

/** How a delivery to a chat platform ended. */
export type DeliveryOutcome = 'delivered' | 'failed';

/**
 * What the gateway counts for `GET /metrics`. Every method is cheap, synchronous and never
 * throws, so recording can sit on the run and accept paths. Without metrics the use cases get
 * NO_METRICS, which records nothing.
 */
export interface Metrics {
  /**
   * A run ended after `durationSeconds`: `outcome` is a cron job's `last_status` or a webhook
   * run's outcome (`delivered`, `delivery_failed`, `run_failed`, `not_run`, `abandoned`).
   */
  runFinished(kind: RunKind, outcome: string, durationSeconds: number): void;
  /** A cron run started `lateSeconds` after its slot was due (0 when on time or early). */
  runStarted(lateSeconds: number): void;
  /** The listener answered a request to a webhook route with `status`. */
  webhookRequest(status: number): void;
  /** A delivery to `platform` ended. */
  deliveryFinished(platform: string, outcome: DeliveryOutcome): void;
  /** The chat receiver of `platform` is receiving (`up`) or not (down, starting, or standing by on a gateway without the receiving role). */
  chatReceiverUp(platform: string, up: boolean): void;
  /** A model turn of `provider`/`model` spent `counts`, costing `costUsd` (null: the model has no price). */
  modelUsage?(provider: string, model: string, counts: TokenCounts, costUsd: number | null): void;
  /** An attempt to send an event out to `subscription` ended: `sent`, to be `retried`, or given up as `undeliverable`. */
  eventOut?(subscription: string, outcome: EventOutOutcome): void;
}

/** How an attempt to send an event out ended. */
export type EventOutOutcome = 'sent' | 'retried' | 'undeliverable';

/** Records nothing: the CLI, and the gateway with metrics off. */
export const NO_METRICS: Metrics = {
  runFinished: () => undefined,
  runStarted: () => undefined,
  webhookRequest: () => undefined,
  deliveryFinished: () => undefined,
  chatReceiverUp: () => undefined,
};
