import type { DeliveryOutcome, Metrics, RunKind } from '../../../src/application/ports/Metrics.js';

/** Keeps what the use cases record, in order. */
export class RecordingMetrics implements Metrics {
  readonly runs: Array<{ kind: RunKind; outcome: string; durationSeconds: number }> = [];
  readonly lateness: number[] = [];
  readonly requests: number[] = [];
  readonly deliveries: Array<{ platform: string; outcome: DeliveryOutcome }> = [];
  /** Whether each platform's chat receiver is up, as last recorded. */
  readonly chatReceivers = new Map<string, boolean>();

  runFinished(kind: RunKind, outcome: string, durationSeconds: number): void {
    this.runs.push({ kind, outcome, durationSeconds });
  }

  runStarted(lateSeconds: number): void {
    this.lateness.push(lateSeconds);
  }

  webhookRequest(status: number): void {
    this.requests.push(status);
  }

  deliveryFinished(platform: string, outcome: DeliveryOutcome): void {
    this.deliveries.push({ platform, outcome });
  }

  chatReceiverUp(platform: string, up: boolean): void {
    this.chatReceivers.set(platform, up);
  }
}
