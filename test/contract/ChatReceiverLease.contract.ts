import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChatReceiverLease } from '../../src/application/ports/InboundChat.js';

export interface ReceiverLeases {
  /** A lease of the store, as one more gateway holds it; all share one role. */
  another(): Promise<ChatReceiverLease>;
  cleanup?(): Promise<void>;
}

/** What every ChatReceiverLease promises: one holder at a time, the role free again once given up. */
export function describeChatReceiverLeaseContract(name: string, make: () => Promise<ReceiverLeases>): void {
  describe(`${name} (ChatReceiverLease contract)`, () => {
    let leases: ReceiverLeases;
    const taken: ChatReceiverLease[] = [];
    const lease = async () => {
      const made = await leases.another();
      taken.push(made);
      return made;
    };

    afterEach(async () => {
      for (const each of taken.splice(0)) await each.release();
      await leases?.cleanup?.();
    });

    it('lets one gateway hold the role, and none other while it does', async () => {
      leases = await make();
      const [first, second, third] = [await lease(), await lease(), await lease()];

      expect(await first.tryTake(() => undefined)).toBe(true);
      expect(await second.tryTake(() => undefined)).toBe(false);
      expect(await third.tryTake(() => undefined)).toBe(false);
      // Asking again while holding it keeps it.
      expect(await first.tryTake(() => undefined)).toBe(true);
    });

    it('frees the role when its holder gives it up, for the next who asks', async () => {
      leases = await make();
      const [first, second] = [await lease(), await lease()];
      await first.tryTake(() => undefined);

      await first.release();

      expect(await second.tryTake(() => undefined)).toBe(true);
      expect(await first.tryTake(() => undefined)).toBe(false);
    });
  });
}
