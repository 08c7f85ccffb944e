import type { ReceiverHealth } from '../../../src/application/ports/InboundChat.js';

/** What a source reported about itself, in order: `up`, `down: <reason>`, `ended: <reason>`. */
export class RecordingReceiverHealth implements ReceiverHealth {
  readonly reports: string[] = [];

  up(): void {
    this.reports.push('up');
  }

  down(reason: string): void {
    this.reports.push(`down: ${reason}`);
  }

  ended(reason: string): void {
    this.reports.push(`ended: ${reason}`);
  }
}
