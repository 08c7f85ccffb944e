import type { Timer } from '../../../src/application/ports/Timer.js';

/** Waits no time at all, remembers every wait asked for, in milliseconds, and counts them as elapsed. */
export class RecordingTimer implements Timer {
  readonly waits: number[] = [];
  private elapsed = 0;

  /** The sum of every wait so far: each wait moves the time on at once. */
  monotonicNow(): number {
    return this.elapsed;
  }

  async wait(ms: number): Promise<void> {
    this.waits.push(ms);
    this.elapsed += ms;
  }
}
