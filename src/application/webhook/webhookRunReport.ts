/** What a webhook run reports, and what an answer waiting for its delivery keeps. */
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import type { WebhookDelivery } from '../../domain/webhook/webhookRun.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import type { TraceHandle } from '../ports/RunTracing.js';
import type { ShownLater } from '../runs/RunRecorder.js';

/**
 * How one event ended:
 * - `delivered` — the agent answered and the answer reached the route's target;
 * - `delivery_failed` — the agent answered, the delivery did not get through;
 * - `run_failed` — the agent run failed;
 * - `not_run` — nothing was spent: the route is gone, no model is usable, or the delivery
 *   cannot be resolved (a `repo_comment` without `owner/name` and a PR number, an unconfigured
 *   platform);
 * - `abandoned` — the run was aborted because the worker is stopping; the event is to be run
 *   again after the restart.
 */
export type WebhookRunStatus = 'delivered' | 'delivery_failed' | 'run_failed' | 'not_run' | 'abandoned';

export interface WebhookRunReport {
  status: WebhookRunStatus;
  /** The sentence logged for every status but `delivered`. */
  error: string | null;
  /** The platform's message ids of a delivered answer; empty for the log and code-host comments. */
  messageIds?: string[];
}

/** What a waiting delivery keeps of its event: not the payload. */
export type WebhookEventIds = Pick<WebhookEvent, 'id' | 'route' | 'event' | 'deliveryId' | 'receivedAt'>;

/**
 * An event whose answer is recorded and whose delivery is still to be made: small, since the
 * answer stays in its run record until the delivery reads it.
 */
export interface PendingWebhookDelivery {
  event: WebhookEventIds;
  route: WebhookRoute;
  delivery: WebhookDelivery;
  /**
   * Deliveries that wait for one another: one lane per platform (`platform:telegram`), one for
   * the code host's comments, one for the log. A slow platform holds up only its own lane.
   */
  lane: string;
  /** When the run started (ms), for the run's duration. */
  startedAtMs: number;
  /** The model that answered; null when not known (an answer recorded before a restart). */
  model: string | null;
  /** The answer itself, only when its run record could not be written to hold it. */
  unrecordedAnswer?: string;
  /**
   * The run's entry in the run ledger while the delivery waits: written only once the delivery
   * has waited RUNNING_RECORD_AFTER_MS, so that an answer delivered at once is written to the
   * ledger once, with its outcome. Stopped (and awaited) before the final entry is written.
   */
  shownInLedger?: ShownLater;
  /** The run's trace, still open: the delivery is part of it, and ends it (docs/traces.md). */
  trace?: TraceHandle;
}

/** The end of the agent's part of a run: a final report, or an answer waiting for its delivery. */
export type WebhookAnswerOutcome = { report: WebhookRunReport; pending: null } | { report: null; pending: PendingWebhookDelivery };

/** The fields every log line about an event carries. */
export function aboutEvent(event: Pick<WebhookEvent, 'id' | 'route' | 'event' | 'deliveryId'>): Record<string, string> {
  return { event_id: event.id, route: event.route, event: event.event, delivery_id: event.deliveryId };
}

/** What a waiting delivery keeps of its event. */
export function idsOf(event: WebhookEvent): WebhookEventIds {
  return { id: event.id, route: event.route, event: event.event, deliveryId: event.deliveryId, receivedAt: event.receivedAt };
}
