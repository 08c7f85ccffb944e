import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import type { WebhookSubscription } from '../../domain/webhook/WebhookSubscription.js';

/** The subscriptions that could be read, and one sentence for each entry that could not. */
export interface SubscriptionSnapshot {
  /** Sorted by name. */
  subscriptions: WebhookSubscription[];
  problems: string[];
}

/** The subscription store cannot be read or written, or is not a subscription store at all. */
export class SubscriptionStoreError extends AppError {
  constructor(
    readonly reason: 'unavailable' | 'damaged',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(
      reason === 'damaged' ? ERROR_CODES.WEBHOOK.SUBSCRIPTIONS_DAMAGED : ERROR_CODES.WEBHOOK.SUBSCRIPTIONS_UNAVAILABLE,
      message,
      options,
    );
  }
}

/** A change to one subscription: the new one (null removes it) and what to answer. */
export interface SubscriptionChange<T> {
  next: WebhookSubscription | null;
  result: T;
}

/** Dynamic webhook subscriptions by name (docs/webhooks.md). */
export interface WebhookSubscriptionRepository {
  /**
   * Every subscription as stored now; an absent store is empty. Cheap when nothing changed
   * since the last call, so the listener may call it on every request. Throws
   * SubscriptionStoreError.
   */
  load(): Promise<SubscriptionSnapshot>;
  /**
   * Every subscription as committed when it is called, whatever a cache behind `load` holds: for
   * a request naming a route `load` did not find (created a moment ago by another process).
   * Throws SubscriptionStoreError.
   */
  reload(): Promise<SubscriptionSnapshot>;
  /**
   * Reads the subscription `name` afresh (null when absent or unreadable), applies `change`
   * and stores its `next`, as one step serialized across processes; other entries are left as
   * they are. `next` equal to the value given writes nothing, nor does a `change` that throws
   * (its error is passed on). Throws SubscriptionStoreError, never overwriting a damaged store.
   */
  update<T>(name: string, change: (current: WebhookSubscription | null) => SubscriptionChange<T>): Promise<T>;
}
