import type { IdGenerator } from '../../../src/application/ports/IdGenerator.js';

/** Predictable ids: 000000000001, 000000000002, … */
export class SequentialIds implements IdGenerator {
  private next = 1;

  jobId(): string {
    return (this.next++).toString(16).padStart(12, '0');
  }
}
