import type { BotChatOwner, ClaimedBotChatMessage } from '../../../src/application/ports/BotChatDelivery.js';

/** A mailbox in memory: `queue` deliveries, then read what was claimed and how it was settled. */
export class InMemoryBotChatOwner implements BotChatOwner {
  /** Another live conversation holds the mailbox. */
  ownedElsewhere = false;
  registered = false;
  renewals = 0;
  readonly queued: ClaimedBotChatMessage[] = [];
  readonly claimed: string[] = [];
  readonly settled = new Map<string, string | null>();

  queue(message: ClaimedBotChatMessage): void {
    this.queued.push(message);
  }

  async register(): Promise<boolean> {
    this.registered = !this.ownedElsewhere;
    return this.registered;
  }

  async renew(): Promise<void> {
    this.renewals += 1;
  }

  async release(): Promise<void> {
    this.registered = false;
  }

  async claimQueued(): Promise<ClaimedBotChatMessage[]> {
    if (!this.registered) return [];
    const taken = this.queued.splice(0);
    this.claimed.push(...taken.map((message) => message.receipt));
    return taken;
  }

  async settle(receipt: string, error: string | null): Promise<void> {
    this.settled.set(receipt, error);
  }
}
