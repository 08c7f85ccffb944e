import type { OrphanProcesses } from '../../../src/application/ports/OrphanProcesses.js';

/** Records which claimants' orphans were asked for; kills nothing. */
export class RecordingOrphanProcesses implements OrphanProcesses {
  readonly marked: string[] = [];
  readonly killedFor: string[] = [];

  markChildrenOf(claimant: string): void {
    this.marked.push(claimant);
  }

  async killOrphansOf(claimant: string): Promise<number> {
    this.killedFor.push(claimant);
    return 0;
  }

  /** How many sweeps for the dead were made. */
  sweeps = 0;

  async killOrphansOfTheDead(): Promise<Map<string, number>> {
    this.sweeps += 1;
    return new Map();
  }
}
