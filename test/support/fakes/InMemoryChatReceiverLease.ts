import type { ChatReceiverLease } from '../../../src/application/ports/InboundChat.js';

/** Who holds the receiving role among the fakes sharing it (what one store is to gateways). */
export class SharedReceiverRole {
  holder: InMemoryChatReceiverLease | null = null;
}

/** The receiving role in memory, for tests: `lose()` plays a store whose connection broke. */
export class InMemoryChatReceiverLease implements ChatReceiverLease {
  private onLost: (() => void) | null = null;

  constructor(private readonly role: SharedReceiverRole = new SharedReceiverRole()) {}

  async tryTake(onLost: () => void): Promise<boolean> {
    if (this.role.holder !== null && this.role.holder !== this) return false;
    this.role.holder = this;
    this.onLost = onLost;
    return true;
  }

  async release(): Promise<void> {
    if (this.role.holder === this) this.role.holder = null;
  }

  /** The role is taken from this holder, which hears of it. */
  lose(): void {
    if (this.role.holder !== this) return;
    this.role.holder = null;
    this.onLost?.();
  }
}
