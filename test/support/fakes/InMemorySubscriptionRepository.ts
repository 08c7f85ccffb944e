import type { WebhookSubscription } from '../../../src/domain/webhook/WebhookSubscription.js';
import type {
  SubscriptionChange,
  SubscriptionSnapshot,
  WebhookSubscriptionRepository,
} from '../../../src/application/ports/WebhookSubscriptionRepository.js';

/** Subscriptions in memory; updates are serialized like the file store's. */
export class InMemorySubscriptionRepository implements WebhookSubscriptionRepository {
  private readonly entries = new Map<string, WebhookSubscription>();
  private queue: Promise<unknown> = Promise.resolve();
  writes = 0;

  constructor(subscriptions: readonly WebhookSubscription[] = []) {
    for (const subscription of subscriptions) this.entries.set(subscription.name, structuredClone(subscription));
  }

  reload(): Promise<SubscriptionSnapshot> {
    return this.load();
  }

  async load(): Promise<SubscriptionSnapshot> {
    const subscriptions = [...this.entries.values()].map((subscription) => structuredClone(subscription));
    subscriptions.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { subscriptions, problems: [] };
  }

  update<T>(name: string, change: (current: WebhookSubscription | null) => SubscriptionChange<T>): Promise<T> {
    const run = this.queue.then(() => {
      const stored = this.entries.get(name);
      const current = stored ? structuredClone(stored) : null;
      const { next, result } = change(current);
      if (next === current) return result;
      if (next === null) this.entries.delete(name);
      else this.entries.set(name, structuredClone(next));
      this.writes += 1;
      return result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Test helper: the stored subscription with this name. */
  get(name: string): WebhookSubscription | undefined {
    const stored = this.entries.get(name);
    return stored ? structuredClone(stored) : undefined;
  }
}
