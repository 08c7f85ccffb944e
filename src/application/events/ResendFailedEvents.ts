import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { EventsError } from '../../domain/errors.js';
import type { Clock } from '../ports/Clock.js';
import type { EventOutbox } from '../ports/EventOutbox.js';
import { TOKENS } from '../ports/tokens.js';

/** The most events `--all` resends at once. */
export const RESENT_AT_MOST = 10_000;

/**
 * `agent events resend`: puts events given up on back in the outbox, due now, with a fresh 24
 * hours of attempts and their own ids (docs/events.md, Events that never got through). The
 * gateway sends them as it sends any. Returns the ids put back, by subscription.
 */
@injectable()
export class ResendFailedEvents {
  constructor(
    @inject(TOKENS.EventOutbox) private readonly outbox: EventOutbox,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  /** One event; EventsError `EVENTS.NOT_FOUND` when no event given up on has that id. */
  async one(input: { eventId: string; subscription?: string | null }): Promise<Array<{ subscription: string; eventId: string }>> {
    const matching = (await this.outbox.failed(RESENT_AT_MOST)).filter(
      (failed) => failed.event.id === input.eventId && (!input.subscription || failed.subscription === input.subscription),
    );
    if (matching.length === 0) {
      throw new EventsError(
        ERROR_CODES.EVENTS.NOT_FOUND,
        `No event given up on has the id ${input.eventId}${input.subscription ? ` for events_out.${input.subscription}` : ''}; "agent events failed" lists them.`,
      );
    }
    return this.resend(matching.map((failed) => ({ subscription: failed.subscription, eventId: failed.event.id })));
  }

  /** Every event given up on (of `subscription`, when given). */
  async all(input: { subscription?: string | null }): Promise<Array<{ subscription: string; eventId: string }>> {
    const failed = (await this.outbox.failed(RESENT_AT_MOST)).filter(
      (each) => !input.subscription || each.subscription === input.subscription,
    );
    return this.resend(failed.map((each) => ({ subscription: each.subscription, eventId: each.event.id })));
  }

  private async resend(
    events: Array<{ subscription: string; eventId: string }>,
  ): Promise<Array<{ subscription: string; eventId: string }>> {
    const now = this.clock.now();
    const resent: Array<{ subscription: string; eventId: string }> = [];
    for (const event of events) if (await this.outbox.resend(event.subscription, event.eventId, now)) resent.push(event);
    return resent;
  }
}
