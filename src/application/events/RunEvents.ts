/**
 * Where the application tells what happened to the `events_out` subscriptions (docs/events.md):
 * each event goes into the outbox once per subscription that wants it, for the gateway to send.
 * With no subscription nothing is written; an outbox that cannot take an event is logged, and
 * the run goes on.
 */
import { inject, injectable } from 'inversify';
import { errorText } from '../../domain/errors.js';
import { eventsOfSavedRun, jobPausedEvent, runStartedEvent, wants, type OutboundEvent } from '../../domain/events/outboundEvents.js';
import type { Job } from '../../domain/Job.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import type { Clock } from '../ports/Clock.js';
import type { EventOutbox } from '../ports/EventOutbox.js';
import type { EventSubscriptions } from '../ports/EventSubscriptions.js';
import type { Logger } from '../ports/Logger.js';
import { TOKENS } from '../ports/tokens.js';

/** Puts the events of runs and jobs into the outbox. */
@injectable()
export class RunEvents {
  constructor(
    @inject(TOKENS.EventOutbox) private readonly outbox: EventOutbox,
    @inject(TOKENS.EventSubscriptions) private readonly subscriptions: EventSubscriptions,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /** A run started (its record as it starts). */
  runStarted(run: RunRecord): Promise<void> {
    return this.publish([runStartedEvent(run)]);
  }

  /** A run's record was saved: its end, and its failed deliveries, once each however often it is saved. */
  runSaved(run: RunRecord): Promise<void> {
    return this.publish(eventsOfSavedRun(run));
  }

  /** A job was paused (`before` is how it was stored before, `after` after): nothing when it was paused already. */
  jobPaused(before: Pick<Job, 'state'>, after: Job): Promise<void> {
    if (before.state === 'paused' || after.state !== 'paused' || !after.paused_at) return Promise.resolve();
    return this.publish([jobPausedEvent(after, after.paused_at, after.paused_reason ?? null)]);
  }

  private async publish(events: readonly OutboundEvent[]): Promise<void> {
    const subscriptions = this.subscriptions.all();
    if (subscriptions.length === 0 || events.length === 0) return;
    const entries = events.flatMap((event) =>
      subscriptions
        .filter((subscription) => wants(subscription, event))
        .map((subscription) => ({ subscription: subscription.name, event })),
    );
    if (entries.length === 0) return;
    try {
      await this.outbox.add(entries, this.clock.now());
    } catch (error) {
      this.log.warn(`could not keep ${entries.length} event(s) out for sending: ${errorText(error)}`, {
        events: entries.map((entry) => entry.event.id).join(','),
      });
    }
  }
}
