import { errorText } from '../../domain/errors.js';
import { eventBody, type OutboundEvent } from '../../domain/events/outboundEvents.js';
import type { EventSender, EventSendResult } from '../../application/ports/EventSender.js';
import { standardWebhookHeaders } from './standardWebhookSignature.js';

/** A receiver that has not answered in this long is taken for one that did not answer (and tried again later). */
export const SEND_TIMEOUT_MS = 15_000;

/**
 * EventSender over the global fetch: one POST of the event's JSON body, signed when it is sent
 * (`webhook-timestamp` is the attempt's time; `webhook-id` the event's, the same at every
 * attempt). The receiver's body is read and dropped; redirects are not followed (a 3xx is tried
 * again later, like a 5xx).
 */
export class HttpEventSender implements EventSender {
  async send(url: string, key: Uint8Array, event: OutboundEvent, now: Date): Promise<EventSendResult> {
    const body = eventBody(event);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'agent-events', ...standardWebhookHeaders(event.id, now, body, key) },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      });
      await response.arrayBuffer().catch(() => undefined);
      return { status: response.status, error: null };
    } catch (error) {
      return { status: null, error: `could not reach ${url}: ${reasonOf(error)}` };
    }
  }
}

/** fetch's "fetch failed" says nothing: the cause (ECONNREFUSED, a timeout) does. */
function reasonOf(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${SEND_TIMEOUT_MS / 1000} seconds`;
  const cause = error instanceof Error ? (error as Error & { cause?: unknown }).cause : undefined;
  if (cause instanceof Error) return (cause as Error & { code?: string }).code ?? cause.message;
  return errorText(error);
}
