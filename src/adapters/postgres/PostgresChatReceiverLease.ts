import type { ChatReceiverLease } from '../../application/ports/InboundChat.js';
import type { PostgresDatabase } from './PostgresDatabase.js';

/** The advisory lock of the receiving role ("chat"); no other lock of this schema uses the key. */
export const RECEIVER_LOCK = 0x63686174;

/**
 * The receiving role among the gateways sharing one database: a session-level advisory lock held
 * on a connection of its own, which the server frees the moment that connection ends (its
 * gateway died, or the server restarted: then the holder hears it lost the role).
 */
export class PostgresChatReceiverLease implements ChatReceiverLease {
  private held: { release(): Promise<void> } | null = null;

  constructor(private readonly database: PostgresDatabase) {}

  async tryTake(onLost: () => void): Promise<boolean> {
    if (this.held) return true;
    const held = await this.database.tryHoldingLock(RECEIVER_LOCK, () => {
      if (this.held === held) this.held = null;
      onLost();
    });
    this.held = held;
    return held !== null;
  }

  async release(): Promise<void> {
    const held = this.held;
    this.held = null;
    await held?.release();
  }
}
