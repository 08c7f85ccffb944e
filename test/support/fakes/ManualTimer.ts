import type { Timer } from '../../../src/application/ports/Timer.js';

/** Waits that end only when the test moves time on (or the wait is cancelled); its monotonic time moves with them. */
export class ManualTimer implements Timer {
  private elapsed = 0;
  private readonly waiting: Array<{ until: number; resolve: () => void }> = [];

  /** How many waits are still pending. */
  get pending(): number {
    return this.waiting.length;
  }

  /** The time the test has moved on so far. */
  monotonicNow(): number {
    return this.elapsed;
  }

  wait(ms: number, cancel?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (cancel?.aborted) return resolve();
      const onAbort = () => this.release(entry);
      const entry = {
        until: this.elapsed + ms,
        resolve: () => {
          cancel?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.waiting.push(entry);
      cancel?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Moves time on by `ms` and ends every wait that is over. */
  advance(ms: number): void {
    this.elapsed += ms;
    for (const entry of [...this.waiting]) if (entry.until <= this.elapsed) this.release(entry);
  }

  private release(entry: { until: number; resolve: () => void }): void {
    const index = this.waiting.indexOf(entry);
    if (index >= 0) this.waiting.splice(index, 1);
    entry.resolve();
  }
}
