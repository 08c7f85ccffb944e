/**
 * How long runs take and how they end, for `/metrics` (docs/metrics.md), measured the same way
 * for every run kind: from the run's start to its last outcome, its delivery included.
 */
import { inject, injectable, optional } from 'inversify';
import type { Clock } from '../ports/Clock.js';
import { NO_METRICS, type Metrics, type RunKind } from '../ports/Metrics.js';
import { TOKENS } from '../ports/tokens.js';

/** Measures runs. */
@injectable()
export class RunMeter {
  constructor(
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Metrics) @optional() private readonly metrics: Metrics = NO_METRICS,
  ) {}

  /** The time a run starts, in ms, to be given back to `finished`. */
  start(): number {
    return this.clock.now().getTime();
  }

  /** A run of `kind` that started at `startedAtMs` ended with `outcome`. */
  finished(kind: RunKind, outcome: string, startedAtMs: number): void {
    this.metrics.runFinished(kind, outcome, (this.clock.now().getTime() - startedAtMs) / 1000);
  }
}
