import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How often the event loop is sampled: a timer of this period, its lateness recorded each time. */
export const EVENT_LOOP_RESOLUTION_MS = 20;
/** How long each of the two histograms collects before it starts afresh. */
export const EVENT_LOOP_WINDOW_MS = 60_000;

/** What this reads of a `monitorEventLoopDelay` histogram (nanoseconds). */
export interface DelayHistogram {
  enable(): boolean;
  disable(): boolean;
  reset(): void;
  percentile(percentile: number): number;
  readonly max: number;
  readonly count: number;
}

/** The event-loop delay over the window, in seconds. */
export interface EventLoopDelaySnapshot {
  p50: number;
  p99: number;
  max: number;
}

export interface EventLoopDelayOptions {
  /** A new histogram, not yet enabled; default `monitorEventLoopDelay` at {@link EVENT_LOOP_RESOLUTION_MS}. */
  createHistogram?: () => DelayHistogram;
  /** Calls `tick` every `ms` until the returned function is called; default an unref'd setInterval. */
  every?: (ms: number, tick: () => void) => () => void;
}

const unrefInterval = (ms: number, tick: () => void): (() => void) => {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
};

/**
 * How late the gateway's event loop runs its timers, for `agent_event_loop_delay_seconds`
 * (docs/gateway.md, Metrics). Node's histograms cannot be merged, so a sliding window is made of
 * two, each started afresh every {@link EVENT_LOOP_WINDOW_MS} half a window apart: the one started
 * longer ago is read, which covers the last 30 to 60 seconds. A sample is the time between two
 * ticks of a {@link EVENT_LOOP_RESOLUTION_MS} timer, so the resolution is taken off: an idle loop
 * reads close to 0, not 20 ms.
 */
export class EventLoopDelay {
  private readonly histograms: DelayHistogram[];
  /** Index of the histogram started longer ago: the one read. */
  private oldest = 0;
  private stopTicking: (() => void) | null = null;

  constructor(private readonly options: EventLoopDelayOptions = {}) {
    const create = options.createHistogram ?? (() => monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS }));
    this.histograms = [create(), create()];
  }

  /** Starts sampling; a second call does nothing. */
  start(): void {
    if (this.stopTicking) return;
    for (const histogram of this.histograms) histogram.enable();
    // Every half window the oldest histogram starts afresh; the other, now half a window old, is read.
    const every = this.options.every ?? unrefInterval;
    this.stopTicking = every(EVENT_LOOP_WINDOW_MS / 2, () => {
      this.histograms[this.oldest]!.reset();
      this.oldest = 1 - this.oldest;
    });
  }

  /** Stops sampling (at shutdown); the last figures stay readable. */
  stop(): void {
    this.stopTicking?.();
    this.stopTicking = null;
    for (const histogram of this.histograms) histogram.disable();
  }

  /** The delay over the window; null before the first sample. */
  read(): EventLoopDelaySnapshot | null {
    const histogram = [this.histograms[this.oldest]!, this.histograms[1 - this.oldest]!].find((h) => h.count > 0);
    if (!histogram) return null;
    const seconds = (nanoseconds: number) => Math.max(0, nanoseconds / 1e6 - EVENT_LOOP_RESOLUTION_MS) / 1000;
    return { p50: seconds(histogram.percentile(50)), p99: seconds(histogram.percentile(99)), max: seconds(histogram.max) };
  }
}
