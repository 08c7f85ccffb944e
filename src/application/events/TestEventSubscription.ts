import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { EventsError } from '../../domain/errors.js';
import { TEST_EVENT_TYPE, verdictOf, type OutboundEvent } from '../../domain/events/outboundEvents.js';
import type { Clock } from '../ports/Clock.js';
import type { EventSender } from '../ports/EventSender.js';
import type { EventSubscriptions } from '../ports/EventSubscriptions.js';
import { TOKENS } from '../ports/tokens.js';

export interface EventTestResult {
  subscription: string;
  url: string;
  eventId: string;
  status: number;
}

/**
 * `agent events test <name>`: sends one sample event (`event.test`) to the subscription now,
 * once, without the outbox. Throws EventsError `EVENTS.NOT_FOUND` for a name not in
 * `events_out`, `EVENTS.TEST_FAILED` when the receiver gives no 2xx.
 */
@injectable()
export class TestEventSubscription {
  constructor(
    @inject(TOKENS.EventSubscriptions) private readonly subscriptions: EventSubscriptions,
    @inject(TOKENS.EventSender) private readonly sender: EventSender,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async execute(input: { name: string }): Promise<EventTestResult> {
    const all = this.subscriptions.all();
    const subscription = all.find((each) => each.name === input.name);
    if (!subscription) {
      const known = all.length === 0 ? 'config.yaml has no events_out' : `the subscriptions are ${all.map((each) => each.name).join(', ')}`;
      throw new EventsError(ERROR_CODES.EVENTS.NOT_FOUND, `No events_out subscription is named '${input.name}' (${known}).`);
    }
    const now = this.clock.now();
    const event: OutboundEvent = {
      id: `msg_test_${now.getTime()}`,
      type: TEST_EVENT_TYPE,
      timestamp: now.toISOString(),
      data: { subscription: subscription.name, message: 'A sample event sent by "agent events test".' },
      subject: null,
    };
    const result = await this.sender.send(subscription.url, subscription.key, event, now);
    if (result.status === null || verdictOf(result.status) !== 'sent') {
      const why = result.status === null ? (result.error ?? 'no answer') : `it answered HTTP ${result.status}`;
      throw new EventsError(
        ERROR_CODES.EVENTS.TEST_FAILED,
        `The receiver of events_out.${subscription.name} at ${subscription.url} did not take the sample event: ${why}.`,
      );
    }
    return { subscription: subscription.name, url: subscription.url, eventId: event.id, status: result.status };
  }
}
