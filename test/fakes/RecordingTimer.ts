import type { Timer } from '../../src/application/ports/Timer.js';

/** Waits no time at all and remembers every wait asked for, in milliseconds. */
export class RecordingTimer implements Timer {
  readonly waits: number[] = [];

  async wait(ms: number): Promise<void> {
    this.waits.push(ms);
  }
}
