import { inject, injectable } from 'inversify';
import { deliveryKey } from '../../domain/webhook/DeliveryMemory.js';
import { passesFilters } from '../../domain/webhook/fieldFilters.js';
import { SlidingWindowRateLimit } from '../../domain/webhook/SlidingWindowRateLimit.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import {
  deliveryIdOf,
  eventKindOf,
  parseWebhookBody,
  type WebhookHeaders,
} from '../../domain/webhook/webhookRequest.js';
import type { Clock } from '../ports/Clock.js';
import type { IdGenerator } from '../ports/IdGenerator.js';
import type { Logger } from '../ports/Logger.js';
import type { SignatureVerifier } from '../ports/SignatureVerifier.js';
import { TOKENS } from '../ports/tokens.js';
import type { WebhookInbox } from '../ports/WebhookInbox.js';
import type { WebhookListenerSettings } from '../ports/WebhookSettings.js';
import { errorText } from '../../domain/errors.js';

export interface AcceptWebhookInput {
  /** The route the path named, already found. */
  route: WebhookRoute;
  /** The body exactly as received (already within `max_body_bytes`). */
  rawBody: Uint8Array;
  /** Request headers by lower-case name. */
  headers: WebhookHeaders;
  /** The Content-Type header, or null when there was none. */
  contentType: string | null;
}

/** A transport-neutral answer: the HTTP status, a JSON body and extra headers. */
export interface WebhookReply {
  status: number;
  body: Record<string, unknown>;
  headers: Readonly<Record<string, string>>;
}

const reply = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): WebhookReply => ({
  status,
  body,
  headers,
});

/**
 * Takes one webhook request for a known route, in the order decisions §7 fixes:
 * authentication (401) → rate limit (429 with Retry-After; only authenticated requests count)
 * → body (400) → event filter (200 ignored) → field filters (200 ignored, filter) → idempotency
 * (200 duplicate) → the event is stored in the inbox → 202 accepted. The agent runs later, from
 * the inbox. Never throws: whatever a client sends ends in a 2xx or 4xx reply; a failing inbox
 * is a 503 so that the sender retries.
 *
 * Holds the rate-limit window, so bind it as a singleton. Repeated deliveries are told apart by
 * the inbox, which remembers them across restarts.
 */
@injectable()
export class AcceptWebhook {
  private readonly rateLimit = new SlidingWindowRateLimit();

  constructor(
    @inject(TOKENS.SignatureVerifier) private readonly verifier: SignatureVerifier,
    @inject(TOKENS.WebhookInbox) private readonly inbox: WebhookInbox,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.IdGenerator) private readonly ids: IdGenerator,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.WebhookListenerSettings) private readonly settings: WebhookListenerSettings,
  ) {}

  async execute(input: AcceptWebhookInput): Promise<WebhookReply> {
    const { route } = input;
    const now = this.clock.now();

    if (route.secrets.kind === 'secrets') {
      const check = this.verifier.verify({ rawBody: input.rawBody, headers: input.headers }, route.secrets.values);
      if (!check.valid) {
        this.logger.warn('webhook refused: invalid signature', { route: route.name, scheme: check.scheme ?? 'none' });
        return reply(401, { error: 'Invalid signature' });
      }
    }

    const allowance = this.rateLimit.take(route.name, this.settings.rateLimitPerMinute, now.getTime());
    if (!allowance.allowed) {
      this.logger.warn('webhook refused: rate limit exceeded', { route: route.name, retry_after_seconds: allowance.retryAfterSeconds });
      return reply(429, { error: 'Rate limit exceeded' }, { 'Retry-After': String(allowance.retryAfterSeconds) });
    }

    const body = parseWebhookBody(input.rawBody, input.contentType);
    if (!body.ok) {
      this.logger.warn('webhook refused: malformed body', { route: route.name });
      return reply(400, { error: 'Malformed JSON' });
    }
    const { payload, json } = body;

    const event = eventKindOf(input.headers, payload);
    if (route.events.length > 0 && !route.events.includes(event)) {
      this.logger.debug('webhook ignored: event not in the route\'s events', { route: route.name, event });
      return reply(200, { status: 'ignored', event });
    }

    if (!passesFilters(route.filters, payload)) {
      this.logger.debug('webhook ignored: filters not matched', { route: route.name, event });
      return reply(200, { status: 'ignored', reason: 'filter', route: route.name });
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
    let stored: boolean;
    try {
      stored = await this.inbox.accept(accepted, json ?? undefined, key);
    } catch (error) {
      this.logger.error('webhook not stored: the inbox failed', {
        route: route.name,
        delivery_id: delivery.value,
        error: errorText(error),
      });
      return reply(503, { error: 'Could not store the event; retry later' }, { 'Retry-After': '30' });
    }

    if (!stored) {
      this.logger.info('webhook dropped: duplicate delivery', { route: route.name, event, delivery_id: delivery.value });
      return reply(200, { status: 'duplicate', delivery_id: delivery.value });
    }
    this.logger.info('webhook accepted', { route: route.name, event, delivery_id: delivery.value, event_id: accepted.id });
    return reply(202, { status: 'accepted', route: route.name, event, delivery_id: delivery.value });
  }
}
