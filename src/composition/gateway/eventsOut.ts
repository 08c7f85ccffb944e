import type { Container } from 'inversify';
import { SendOutboxEvents } from '../../application/events/SendOutboxEvents.js';
import type { Logger } from '../../application/ports/Logger.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { GatewayMetrics } from './gatewayMetrics.js';

/**
 * The gateway's sender of events out (docs/events.md), when config.yaml has `events_out`: rounds
 * of the outbox on the Timer, each attempt logged (a failed one as a warning), until the returned
 * stop. Null without subscriptions: nothing is started, nothing read.
 */
export function sendEventsOut(container: Container, logger: Logger, metrics: GatewayMetrics | null): (() => Promise<void>) | null {
  if (container.get(TOKENS.EventSubscriptions).all().length === 0) return null;
  const outbox = container.get(TOKENS.EventOutbox);
  metrics?.watchFailedEvents(() => outbox.failedCount());
  const stop = new AbortController();
  const sending = container.get(SendOutboxEvents).run(
    stop.signal,
    (attempt) => {
      const about = { subscription: attempt.subscription, event_id: attempt.eventId, type: attempt.type };
      if (attempt.outcome === 'sent') logger.debug(`event ${attempt.eventId} sent to events_out.${attempt.subscription}`, about);
      else if (attempt.outcome === 'retried')
        logger.warn(`event ${attempt.eventId} to events_out.${attempt.subscription} is tried again later: ${attempt.error}`, about);
      else logger.error(`event ${attempt.eventId} to events_out.${attempt.subscription} is undeliverable: ${attempt.error}`, about);
    },
    (why) => logger.warn(`events out: ${why}`),
  );
  return async () => {
    stop.abort();
    await sending;
  };
}
