import type { Timer } from '../../application/ports/Timer.js';

export class SystemTimer implements Timer {
  monotonicNow(): number {
    return performance.now();
  }

  yieldTurn(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }

  wait(ms: number, cancel?: AbortSignal, options?: { background?: boolean }): Promise<void> {
    return new Promise((resolve) => {
      if (cancel?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        cancel?.removeEventListener('abort', done);
        resolve();
      };
      // A cancelled wait must not keep the process alive until it would have ended.
      const timer = setTimeout(done, ms);
      if (options?.background) timer.unref();
      cancel?.addEventListener('abort', done, { once: true });
    });
  }
}
