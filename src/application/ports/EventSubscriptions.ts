import type { EventSubscription } from '../../domain/events/outboundEvents.js';

/** The `events_out` subscriptions of config.yaml, read once at start-up; empty when there are none. */
export interface EventSubscriptions {
  all(): readonly EventSubscription[];
}
