import { inject, injectable } from 'inversify';
import { coalesceOf } from '../../domain/webhook/coalesce.js';
import { deliveryKey } from '../../domain/webhook/DeliveryMemory.js';
import { passesFilters } from '../../domain/webhook/fieldFilters.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import {
  deliveryIdOf,
  eventKindOf,
  mediaTypeOf,
  parseWebhookBody,
  takesContentType,
  WEBHOOK_BODY_TYPES,
  type WebhookHeaders,
} from '../../domain/webhook/webhookRequest.js';
import type { Clock } from '../ports/Clock.js';
import type { IdGenerator } from '../ports/IdGenerator.js';
import type { Logger } from '../ports/Logger.js';
import { TOKENS } from '../ports/tokens.js';
import type { WebhookInbox } from '../ports/WebhookInbox.js';
import { errorText } from '../../domain/errors.js';
import { WebhookAdmission } from './WebhookAdmission.js';

export interface AcceptWebhookInput {
  /** The route the path named, already found. */
  route: WebhookRoute;
  /** The body exactly as received (already within `max_body_bytes`). */
  rawBody: Uint8Array;
  /** Request headers by lower-case name. */
  headers: WebhookHeaders;
  /** The Content-Type header, or null when there was none. */
  contentType: string | null;
  /** The request's span as a W3C traceparent, stored with the event for its run to link to (docs/traces.md); absent without traces. */
  traceparent?: string;
}

/**
 * How one request ended, for the driving adapter to answer in its own terms:
 * refused (`refused_signature`, `rate_limited`, `unsupported_media_type` with the media type sent
 * — null for none — and those the route takes, `malformed_body`), let go without a run
 * (`ignored` for its event or the route's filters, `duplicate` of a delivery already accepted),
 * `unavailable` when the event could not be stored (the inbox or the rate limiter failed) and the
 * sender should retry, or `accepted`.
 */
export type WebhookOutcome =
  | { kind: 'refused_signature' }
  | { kind: 'rate_limited'; retryAfterSeconds: number }
  | { kind: 'unsupported_media_type'; mediaType: string | null; accepted: readonly string[] }
  | { kind: 'malformed_body' }
  | { kind: 'ignored'; reason: 'event'; event: string }
  | { kind: 'ignored'; reason: 'filter'; event: string; route: string }
  | { kind: 'duplicate'; deliveryId: string }
  | { kind: 'unavailable'; retryAfterSeconds: number }
  | { kind: 'accepted'; route: string; event: string; deliveryId: string; eventId: string };

/** How long a sender should wait before retrying an event the inbox or the rate limiter failed. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 30;

/**
 * Takes one webhook request for a known route, in this order (docs/webhooks.md):
 * authentication → rate limit (only authenticated requests count) → body (its Content-Type, then
 * its parsing) → event filter →
 * field filters → idempotency → the event is stored in the inbox → accepted. The agent runs
 * later, from the inbox. Never throws: whatever a client sends ends in an outcome; a failing
 * inbox or rate limiter (its database away) is `unavailable` so that the sender retries.
 *
 * Authentication and the rate limit are WebhookAdmission's, the rate-limit windows the limiter's;
 * repeated deliveries are told apart by the inbox, which remembers them across restarts.
 */
@injectable()
export class AcceptWebhook {
  /** What failed last while events cannot be stored: an outage is logged once, and its end once. */
  private failing: string | null = null;

  constructor(
    /** Authentication and the rate limit. */
    @inject(WebhookAdmission) private readonly admission: WebhookAdmission,
    @inject(TOKENS.WebhookInbox) private readonly inbox: WebhookInbox,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.IdGenerator) private readonly ids: IdGenerator,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  async execute(input: AcceptWebhookInput): Promise<WebhookOutcome> {
    const { route } = input;
    const now = this.clock.now();

    const admission = await this.admission.admit(route, input, now);
    if (admission.kind === 'limiter_failed')
      return this.unavailable('webhook not accepted: the rate limiter failed', { route: route.name, error: admission.error });
    if (admission.kind !== 'admitted') return admission;

    const listed = route.contentTypes ?? [];
    if (!takesContentType(input.contentType, listed)) {
      const mediaType = mediaTypeOf(input.contentType);
      this.logger.warn('webhook refused: a Content-Type the route does not take', {
        route: route.name,
        content_type: mediaType ?? '(none)',
      });
      return { kind: 'unsupported_media_type', mediaType, accepted: [...WEBHOOK_BODY_TYPES, ...listed] };
    }
    const body = parseWebhookBody(input.rawBody, input.contentType);
    if (!body.ok) {
      this.logger.warn('webhook refused: malformed body', { route: route.name });
      return { kind: 'malformed_body' };
    }
    const { payload, json } = body;

    const event = eventKindOf(input.headers, payload);
    if (route.events.length > 0 && !route.events.includes(event)) {
      this.logger.debug("webhook ignored: event not in the route's events", { route: route.name, event });
      return { kind: 'ignored', reason: 'event', event };
    }

    if (!passesFilters(route.filters, payload)) {
      this.logger.debug('webhook ignored: filters not matched', { route: route.name, event });
      return { kind: 'ignored', reason: 'filter', event, route: route.name };
    }

    const delivery = deliveryIdOf(input.headers, now.getTime(), payload);
    const key = delivery.fromSender ? deliveryKey(route.name, delivery.value) : undefined;

    const accepted: WebhookEvent = {
      id: this.ids.jobId(),
      route: route.name,
      event,
      deliveryId: delivery.value,
      payload,
      receivedAt: now.toISOString(),
    };
    if (route.coalesce !== undefined) accepted.coalesce = coalesceOf(route, payload);
    if (input.traceparent !== undefined) accepted.traceparent = input.traceparent;
    let stored: boolean;
    try {
      stored = await this.inbox.accept(accepted, json ?? undefined, key);
    } catch (error) {
      return this.unavailable('webhook not stored: the inbox failed', {
        route: route.name,
        delivery_id: delivery.value,
        error: errorText(error),
      });
    }
    if (this.failing !== null) {
      this.failing = null;
      this.logger.info('webhook events are stored again');
    }

    if (!stored) {
      this.logger.info('webhook dropped: duplicate delivery', { route: route.name, event, delivery_id: delivery.value });
      return { kind: 'duplicate', deliveryId: delivery.value };
    }
    this.logger.info('webhook accepted', { route: route.name, event, delivery_id: delivery.value, event_id: accepted.id });
    return { kind: 'accepted', route: route.name, event, deliveryId: delivery.value, eventId: accepted.id };
  }

  /**
   * The answer to a request whose event cannot be stored now: logged when this failure is new
   * (the same one again, during an outage, is not logged for every request), and the sender told
   * to retry.
   */
  private unavailable(message: string, fields: Record<string, string>): WebhookOutcome {
    const failure = `${message}: ${fields.error}`;
    if (this.failing !== failure) this.logger.error(`${message}; answering 503 until events can be stored again`, fields);
    this.failing = failure;
    return { kind: 'unavailable', retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS };
  }
}
