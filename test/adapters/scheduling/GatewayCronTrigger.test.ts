import { GatewayCronTrigger, type TimerApi } from '../../../src/adapters/scheduling/GatewayCronTrigger.js';
import { RecordingLogger } from '../../fakes/RecordingLogger.js';

/** Timers that fire only when the test says so. */
class ManualTimers implements TimerApi {
  current = 0;
  private nextHandle = 1;
  readonly pending = new Map<number, { at: number; callback: () => void }>();

  set(callback: () => void, delayMs: number): unknown {
    const handle = this.nextHandle++;
    this.pending.set(handle, { at: this.current + delayMs, callback });
    return handle;
  }

  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  now(): number {
    return this.current;
  }

  delays(): number[] {
    return [...this.pending.values()].map((timer) => timer.at - this.current);
  }

  /** Moves time on and fires the timers that became due. */
  advance(ms: number): void {
    this.current += ms;
    for (const [handle, timer] of [...this.pending]) {
      if (timer.at <= this.current) {
        this.pending.delete(handle);
        timer.callback();
      }
    }
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function trigger(nextRunAt: () => Date | null) {
  const timers = new ManualTimers();
  let ticks = 0;
  const cron = new GatewayCronTrigger(
    async () => {
      ticks += 1;
    },
    async () => nextRunAt(),
    new RecordingLogger(),
    timers,
  );
  return { cron, timers, ticks: () => ticks };
}

describe('the gateway cron trigger', () => {
  it('ticks at start and arms a timer for the earliest next run', async () => {
    const { cron, timers, ticks } = trigger(() => new Date(5_000));

    await cron.start();

    expect(ticks()).toBe(1);
    expect(timers.delays()).toEqual([5_000]);
    await cron.stop(1_000);
  });

  it('ticks when the armed time comes, not a minute later', async () => {
    let next: Date | null = new Date(5_000);
    const { cron, timers, ticks } = trigger(() => next);
    await cron.start();
    next = null;

    timers.advance(5_000);
    await settle();

    expect(ticks()).toBe(2);
    expect(timers.delays()).toEqual([]);
    await cron.stop(1_000);
  });

  it('leaves runs more than a minute away to the minute tick', async () => {
    const { cron, timers } = trigger(() => new Date(3_600_000));

    await cron.start();

    expect(timers.delays()).toEqual([]);
    await cron.stop(1_000);
  });

  it('looks again a second later at a job still due after a tick, instead of spinning', async () => {
    const { cron, timers, ticks } = trigger(() => new Date(0));

    await cron.start();

    expect(ticks()).toBe(1);
    expect(timers.delays()).toEqual([1_000]);
    await cron.stop(1_000);
  });

  it('runs a tick asked for during another one right after it, never two at once', async () => {
    let release!: () => void;
    let active = 0;
    let peak = 0;
    let ticks = 0;
    const cron = new GatewayCronTrigger(
      async () => {
        ticks += 1;
        active += 1;
        peak = Math.max(peak, active);
        if (ticks === 1) await new Promise<void>((resolve) => (release = resolve));
        active -= 1;
      },
      async () => null,
      new RecordingLogger(),
      new ManualTimers(),
    );

    const first = cron.start();
    await settle();
    const second = cron.runTick();
    release();
    await Promise.all([first, second]);

    expect(ticks).toBe(2);
    expect(peak).toBe(1);
    await cron.stop(1_000);
  });

  it('waits for the tick in progress when stopped, up to the grace period', async () => {
    let release!: () => void;
    const timers = new ManualTimers();
    const cron = new GatewayCronTrigger(
      () => new Promise<void>((resolve) => (release = resolve)),
      async () => null,
      new RecordingLogger(),
      timers,
    );
    void cron.start();
    await settle();

    const stopping = cron.stop(30_000);
    await settle();
    timers.advance(30_000);

    await expect(stopping).resolves.toBe(false);
    release();
  });
});
