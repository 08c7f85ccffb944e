import { CoalesceGroups, groupRunEvent, type OpenGroup } from '../../../src/domain/webhook/coalesce.js';
import { DeliveryMemory } from '../../../src/domain/webhook/DeliveryMemory.js';
import type { WebhookEvent } from '../../../src/domain/webhook/WebhookEvent.js';
import type { Clock } from '../../../src/application/ports/Clock.js';
import type { WebhookInbox } from '../../../src/application/ports/WebhookInbox.js';

/** A group of coalesced events handed out: its members, and who runs it. */
interface ClosedGroup {
  id: string;
  route: string;
  memberIds: string[];
  claimedBy: string | null;
}

/** What survives a "restart": the events in acceptance order, who claimed each, which claimants are gone. */
class InboxStorage {
  readonly entries: Array<{ event: WebhookEvent; claimedBy: string | null }> = [];
  readonly gone = new Set<string>();
  readonly deliveries = new DeliveryMemory();
  /** The groups of coalesced events not handed out yet (rebuilt from `entries` would give the same). */
  readonly groups = new CoalesceGroups();
  readonly closed: ClosedGroup[] = [];
  processes = 0;
}

const SYSTEM_CLOCK: Clock = { now: () => new Date() };

/**
 * A WebhookInbox in memory. `restarted()` stands for this process dying and a new one starting
 * on the same storage: the old instance's claims belong to a gone process from then on. Groups
 * of coalesced events are due by `clock`.
 */
export class InMemoryWebhookInbox implements WebhookInbox {
  private readonly claimant: string;

  constructor(
    private readonly storage = new InboxStorage(),
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    storage.processes += 1;
    this.claimant = `process-${storage.processes}`;
  }

  restarted(): InMemoryWebhookInbox {
    this.storage.gone.add(this.claimant);
    return new InMemoryWebhookInbox(this.storage, this.clock);
  }

  /** Deliveries are remembered from the event's receivedAt, for an hour. */
  async accept(event: WebhookEvent, _payloadJson?: string, deliveryKey?: string): Promise<boolean> {
    if (deliveryKey !== undefined && !this.storage.deliveries.remember(deliveryKey, Date.parse(event.receivedAt))) return false;
    this.storage.entries.push({ event: structuredClone(event), claimedBy: event.coalesce ? 'held' : null });
    if (event.coalesce)
      this.storage.groups.add({ id: event.id, route: event.route, receivedAtMs: Date.parse(event.receivedAt), coalesce: event.coalesce });
    return true;
  }

  async recover(): Promise<number> {
    const abandoned = this.storage.entries.filter((entry) => entry.claimedBy !== null && this.storage.gone.has(entry.claimedBy));
    for (const entry of abandoned) entry.claimedBy = null;
    const groups = this.storage.closed.filter((group) => group.claimedBy !== null && this.storage.gone.has(group.claimedBy));
    for (const group of groups) group.claimedBy = null;
    return abandoned.length + groups.length;
  }

  async claimNext(skipRoutes?: ReadonlySet<string>): Promise<WebhookEvent | null> {
    const group = this.claimGroup(skipRoutes);
    if (group !== null) return group;
    const entry = this.storage.entries.find((candidate) => candidate.claimedBy === null && !skipRoutes?.has(candidate.event.route));
    if (!entry) return null;
    entry.claimedBy = this.claimant;
    return structuredClone(entry.event);
  }

  private claimGroup(skipRoutes?: ReadonlySet<string>): WebhookEvent | null {
    let closed = this.storage.closed.find((group) => group.claimedBy === null && !skipRoutes?.has(group.route));
    let resumed = true;
    if (closed === undefined) {
      const due: OpenGroup | null = this.storage.groups.due(this.clock.now().getTime(), skipRoutes);
      if (due === null) return null;
      this.storage.groups.close(due);
      closed = { id: due.id, route: due.route, memberIds: due.members.map((member) => member.id), claimedBy: null };
      this.storage.closed.push(closed);
      resumed = false;
    }
    closed.claimedBy = this.claimant;
    const members = closed.memberIds.map((id) => this.storage.entries.find((entry) => entry.event.id === id)!.event);
    return structuredClone(groupRunEvent(closed.id, members, resumed));
  }

  async complete(eventId: string): Promise<void> {
    const group = this.storage.closed.findIndex((candidate) => candidate.id === eventId);
    const ids = group >= 0 ? this.storage.closed[group]!.memberIds : [eventId];
    if (group >= 0) this.storage.closed.splice(group, 1);
    for (const id of ids) {
      const index = this.storage.entries.findIndex((entry) => entry.event.id === id);
      if (index >= 0) this.storage.entries.splice(index, 1);
    }
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
