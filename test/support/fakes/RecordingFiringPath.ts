import type { FireOutcome, FiringPath } from '../../../src/application/ports/SchedulerProvider.js';

/** A firing path that records what a provider fires and lets the test end runs. */
export class RecordingFiringPath implements FiringPath {
  dueCalls = 0;
  readonly slots: Array<{ jobId: string; fireAt: string }> = [];
  /** What `slot` answers. */
  outcome: FireOutcome = { status: 'stale' };
  private readonly listeners: Array<(jobId: string) => void> = [];

  async due(): Promise<{ retrySoon: boolean }> {
    this.dueCalls += 1;
    return { retrySoon: false };
  }

  async slot(jobId: string, fireAt: string): Promise<FireOutcome> {
    this.slots.push({ jobId, fireAt });
    return this.outcome;
  }

  onRunFinished(listener: (jobId: string) => void): void {
    this.listeners.push(listener);
  }

  /** Says that a run of `jobId` has ended, as the gateway would. */
  finishRun(jobId: string): void {
    for (const listener of this.listeners) listener(jobId);
  }
}
