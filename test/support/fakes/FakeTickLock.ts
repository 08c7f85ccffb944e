import type { TickLease, TickLock } from '../../../src/application/ports/TickLock.js';

/** An in-process tick lock; `heldElsewhere` simulates another process holding it. */
export class FakeTickLock implements TickLock {
  held = false;
  heldElsewhere = false;
  acquisitions = 0;

  async tryAcquire(): Promise<TickLease | null> {
    if (this.held || this.heldElsewhere) return null;
    this.held = true;
    this.acquisitions += 1;
    return { release: async () => void (this.held = false) };
  }
}
