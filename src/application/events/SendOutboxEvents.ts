/**
 * The gateway's sender of events out (docs/events.md): claims what is due in the outbox, POSTs
 * each to its subscription, and records how it went: sent (removed), retried with backoff, or
 * undeliverable (24 hours of failures, or refused by the receiver with a 4xx other than 408, 425
 * and 429). Only the gateway runs it; the claim keeps two replicas from sending one event at once.
 */
import { inject, injectable, optional } from 'inversify';
import { errorText } from '../../domain/errors.js';
import { nextAttemptAt, verdictOf } from '../../domain/events/outboundEvents.js';
import type { Clock } from '../ports/Clock.js';
import type { EventOutbox, OutboxEntry } from '../ports/EventOutbox.js';
import type { EventSender } from '../ports/EventSender.js';
import type { EventSubscriptions } from '../ports/EventSubscriptions.js';
import { NO_METRICS, type EventOutOutcome, type Metrics } from '../ports/Metrics.js';
import type { Timer } from '../ports/Timer.js';
import { TOKENS } from '../ports/tokens.js';

/** Events sent at once, at most, per round. */
const PER_ROUND = 16;
/** How long a claim keeps an event from the other senders: longer than any attempt takes (EventSender times out well before). */
export const CLAIM_MS = 60_000;
/** How often the outbox is looked at while it has nothing due: events other processes added wait at most this long. */
export const POLL_MS = 1_000;

/** How one attempt ended, for the gateway's log. */
export interface EventAttempt {
  subscription: string;
  eventId: string;
  type: string;
  outcome: EventOutOutcome;
  status: number | null;
  error: string | null;
}

@injectable()
export class SendOutboxEvents {
  constructor(
    @inject(TOKENS.EventOutbox) private readonly outbox: EventOutbox,
    @inject(TOKENS.EventSubscriptions) private readonly subscriptions: EventSubscriptions,
    @inject(TOKENS.EventSender) private readonly sender: EventSender,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Timer) private readonly timer: Timer,
    @inject(TOKENS.Metrics) @optional() private readonly metrics: Metrics = NO_METRICS,
  ) {}

  /** One round: every claimed due event tried once; what each attempt came to. */
  async execute(): Promise<EventAttempt[]> {
    const due = await this.outbox.claimDue(this.clock.now(), PER_ROUND, CLAIM_MS);
    return Promise.all(due.map((entry) => this.attempt(entry)));
  }

  /**
   * Sends rounds until `stop` is aborted, waiting POLL_MS on the Timer between rounds that found
   * nothing due; a round that fails (the store unreachable) is told to `onProblem` and waited
   * out the same way. Resolves once stopped.
   */
  async run(stop: AbortSignal, onAttempt: (attempt: EventAttempt) => void, onProblem: (why: string) => void): Promise<void> {
    while (!stop.aborted) {
      let attempts: EventAttempt[] = [];
      try {
        attempts = await this.execute();
      } catch (error) {
        onProblem(errorText(error));
      }
      for (const attempt of attempts) onAttempt(attempt);
      if (attempts.length === 0) await this.timer.wait(POLL_MS, stop, { background: true }).catch(() => undefined);
    }
  }

  private async attempt(entry: OutboxEntry): Promise<EventAttempt> {
    const { event } = entry;
    const subscription = this.subscriptions.all().find((each) => each.name === entry.subscription);
    const ended = (outcome: EventOutOutcome, status: number | null, error: string | null): EventAttempt => {
      this.metrics.eventOut?.(entry.subscription, outcome);
      return { subscription: entry.subscription, eventId: event.id, type: event.type, outcome, status, error };
    };
    if (!subscription) {
      const why = `events_out.${entry.subscription} is no longer in config.yaml`;
      await this.outbox.giveUp(entry.subscription, event.id, why, this.clock.now());
      return ended('undeliverable', null, why);
    }
    let result: { status: number | null; error: string | null };
    try {
      result = await this.sender.send(subscription.url, subscription.key, event, this.clock.now());
    } catch (error) {
      result = { status: null, error: errorText(error) };
    }
    const verdict = verdictOf(result.status);
    if (verdict === 'sent') {
      await this.outbox.sent(entry.subscription, event.id);
      return ended('sent', result.status, null);
    }
    const why = result.error ?? `the receiver answered HTTP ${result.status}`;
    const now = this.clock.now();
    const next = verdict === 'refused' ? null : nextAttemptAt(entry.createdAt, entry.attempts + 1, now, subscription.firstRetryMs);
    if (next === null) {
      await this.outbox.giveUp(entry.subscription, event.id, why, now);
      return ended('undeliverable', result.status, why);
    }
    await this.outbox.retryAt(entry.subscription, event.id, next, why);
    return ended('retried', result.status, why);
  }
}
