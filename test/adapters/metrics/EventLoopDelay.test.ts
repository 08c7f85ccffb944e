import { EventLoopDelay, type DelayHistogram } from '../../../src/adapters/metrics/EventLoopDelay.js';
import { PrometheusMetrics } from '../../../src/adapters/metrics/PrometheusMetrics.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheusText.js';

/** A histogram whose samples the test sets, in milliseconds between two ticks of the 20 ms timer. */
class FakeHistogram implements DelayHistogram {
  enabled = false;
  samples: number[] = [];
  enable(): boolean {
    this.enabled = true;
    return true;
  }
  disable(): boolean {
    this.enabled = false;
    return true;
  }
  reset(): void {
    this.samples = [];
  }
  percentile(percentile: number): number {
    const sorted = [...this.samples].sort((a, b) => a - b);
    return (sorted[Math.min(sorted.length - 1, Math.ceil((percentile / 100) * sorted.length) - 1)] ?? 0) * 1e6;
  }
  get max(): number {
    return Math.max(0, ...this.samples) * 1e6;
  }
  get count(): number {
    return this.samples.length;
  }
}

function monitored() {
  const histograms: FakeHistogram[] = [];
  let tick: (() => void) | null = null;
  let stopped = false;
  const delay = new EventLoopDelay({
    createHistogram: () => {
      const histogram = new FakeHistogram();
      histograms.push(histogram);
      return histogram;
    },
    every: (ms, onTick) => {
      expect(ms).toBe(30_000);
      tick = onTick;
      return () => {
        stopped = true;
      };
    },
  });
  return { delay, histograms, halfWindow: () => tick?.(), stopped: () => stopped };
}

describe('the event-loop delay over a sliding window', () => {
  it('reads nothing before the first sample, then the quantiles in seconds beyond the 20 ms timer', () => {
    const { delay, histograms } = monitored();
    delay.start();
    expect(delay.read()).toBeNull();

    for (const histogram of histograms) histogram.samples = [20, 20, 21, 22, 120];

    expect(delay.read()).toEqual({ p50: 0.001, p99: 0.1, max: 0.1 });
  });

  it('reads the histogram started longer ago, and starts the other afresh every half window', () => {
    const { delay, histograms, halfWindow } = monitored();
    delay.start();
    const [first, second] = histograms as [FakeHistogram, FakeHistogram];
    first.samples = [520];
    second.samples = [20];

    expect(delay.read()?.max).toBe(0.5);
    halfWindow();
    expect(first.samples).toEqual([]);
    expect(delay.read()?.max).toBe(0);
    first.samples = [70];
    halfWindow();
    expect(second.samples).toEqual([]);
    expect(delay.read()?.max).toBe(0.05);
  });

  it('stops sampling at stop and keeps its last figures', () => {
    const { delay, histograms, stopped } = monitored();
    delay.start();
    histograms[0]!.samples = [30];

    delay.stop();

    expect(stopped()).toBe(true);
    expect(histograms.every((histogram) => !histogram.enabled)).toBe(true);
    expect(delay.read()?.max).toBeCloseTo(0.01);
  });

  it('is exposed as agent_event_loop_delay_seconds by quantile', async () => {
    const { delay, histograms } = monitored();
    const metrics = new PrometheusMetrics(delay);
    metrics.startEventLoopMonitor();
    for (const histogram of histograms) histogram.samples = [20, 21, 60];

    const scraped = parsePrometheusText(await metrics.render());

    expect(scraped.types.agent_event_loop_delay_seconds).toBe('gauge');
    expect(sampleValue(scraped, 'agent_event_loop_delay_seconds', { quantile: '0.5' })).toBeCloseTo(0.001);
    expect(sampleValue(scraped, 'agent_event_loop_delay_seconds', { quantile: '0.99' })).toBeCloseTo(0.04);
    expect(sampleValue(scraped, 'agent_event_loop_delay_seconds', { quantile: '1' })).toBeCloseTo(0.04);
    metrics.stopEventLoopMonitor();
  });
});
