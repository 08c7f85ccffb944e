import { DeliveryMemory } from '../../../src/domain/webhook/DeliveryMemory.js';
import type { WebhookEvent } from '../../../src/domain/webhook/WebhookEvent.js';
import type { WebhookInbox } from '../../../src/application/ports/WebhookInbox.js';

/** What survives a "restart": the events in acceptance order, who claimed each, which claimants are gone. */
class InboxStorage {
  readonly entries: Array<{ event: WebhookEvent; claimedBy: string | null }> = [];
  readonly gone = new Set<string>();
  readonly deliveries = new DeliveryMemory();
  processes = 0;
}

/**
 * A WebhookInbox in memory. `restarted()` stands for this process dying and a new one starting
 * on the same storage: the old instance's claims belong to a gone process from then on.
 */
export class InMemoryWebhookInbox implements WebhookInbox {
  private readonly claimant: string;

  constructor(private readonly storage = new InboxStorage()) {
    storage.processes += 1;
    this.claimant = `process-${storage.processes}`;
  }

  restarted(): InMemoryWebhookInbox {
    this.storage.gone.add(this.claimant);
    return new InMemoryWebhookInbox(this.storage);
  }

  /** Deliveries are remembered from the event's receivedAt, for an hour. */
  async accept(event: WebhookEvent, _payloadJson?: string, deliveryKey?: string): Promise<boolean> {
    if (deliveryKey !== undefined && !this.storage.deliveries.remember(deliveryKey, Date.parse(event.receivedAt))) return false;
    this.storage.entries.push({ event: structuredClone(event), claimedBy: null });
    return true;
  }

  async recover(): Promise<number> {
    const abandoned = this.storage.entries.filter((entry) => entry.claimedBy !== null && this.storage.gone.has(entry.claimedBy));
    for (const entry of abandoned) entry.claimedBy = null;
    return abandoned.length;
  }

  async claimNext(skipRoutes?: ReadonlySet<string>): Promise<WebhookEvent | null> {
    const entry = this.storage.entries.find((candidate) => candidate.claimedBy === null && !skipRoutes?.has(candidate.event.route));
    if (!entry) return null;
    entry.claimedBy = this.claimant;
    return structuredClone(entry.event);
  }

  async complete(eventId: string): Promise<void> {
    const index = this.storage.entries.findIndex((entry) => entry.event.id === eventId);
    if (index >= 0) this.storage.entries.splice(index, 1);
  }

  async pending(): Promise<number> {
    return this.storage.entries.length;
  }

  async close(): Promise<void> {}

  /** Test helper: the ids of the events not yet completed, claimed or not, in acceptance order. */
  ids(): string[] {
    return this.storage.entries.map((entry) => entry.event.id);
  }
}
