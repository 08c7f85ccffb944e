import type { Timer } from '../../application/ports/Timer.js';

export class SystemTimer implements Timer {
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}
