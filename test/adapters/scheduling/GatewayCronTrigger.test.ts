import { GatewayCronTrigger, type TimerApi, type TriggerTarget } from '../../../src/adapters/scheduling/GatewayCronTrigger.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';

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

/** What the trigger drives, recording what it was asked. */
class FakeTarget implements TriggerTarget {
  looks = 0;
  lockBusy = false;
  next: Date | null = null;
  /** While set, a look waits for it. */
  hold: Promise<void> | null = null;
  active = 0;
  peak = 0;
  storeChanged: (() => void) | null = null;
  runFinished: (() => void) | null = null;
  unwatched = false;
  /** While set, a look fails with it (the store out of reach). */
  failure: Error | null = null;
  claimAheadMs = 0;
  /** Runs in the middle of a look, e.g. to let time pass while it reads the store. */
  whileLooking: (() => void) | null = null;

  async dispatch(): Promise<{ lockBusy: boolean }> {
    this.looks += 1;
    this.active += 1;
    this.peak = Math.max(this.peak, this.active);
    this.whileLooking?.();
    if (this.hold) await this.hold;
    if (this.failure) {
      this.active -= 1;
      throw this.failure;
    }
    this.active -= 1;
    return { lockBusy: this.lockBusy };
  }

  async nextRunAt(after: Date): Promise<Date | null> {
    return this.next && this.next > after ? this.next : null;
  }

  watchStore(onChange: () => void): () => void {
    this.storeChanged = onChange;
    return () => (this.unwatched = true);
  }

  onRunFinished(listener: () => void): void {
    this.runFinished = listener;
  }
}

function trigger() {
  const timers = new ManualTimers();
  const target = new FakeTarget();
  const log = new RecordingLogger();
  const cron = new GatewayCronTrigger(target, log, timers);
  return { cron, timers, target, log };
}

describe('the gateway cron trigger', () => {
  it('looks at start and arms a timer for the earliest next run', async () => {
    const { cron, timers, target } = trigger();
    target.next = new Date(5_000);

    await cron.start();

    expect(target.looks).toBe(1);
    expect(timers.delays()).toEqual([5_000]);
    await cron.stop();
  });

  it('looks when the armed time comes, not a minute later', async () => {
    const { cron, timers, target } = trigger();
    target.next = new Date(5_000);
    await cron.start();
    target.next = null;

    timers.advance(5_000);
    await settle();

    expect(target.looks).toBe(2);
    expect(timers.delays()).toEqual([]);
    await cron.stop();
  });

  it('looks again at once for a job that fell due while a look was under way', async () => {
    const { cron, timers, target } = trigger();
    // The job falls due 5 ms after the look began, and the look takes 20 ms: it did not see the
    // job due, and by the time the look ends its time has passed.
    target.next = new Date(5);
    target.whileLooking = () => {
      timers.current += 20;
      target.whileLooking = null;
    };

    await cron.start();
    const delays = timers.delays();
    await cron.stop();

    expect(delays).toEqual([0]);
  });

  it('logs a store that stays out of reach once, and once more when looks work again', async () => {
    const { cron, target, log } = trigger();
    target.failure = new Error('Cannot use the database db:5432/agent: nothing listens there');
    await cron.start();
    for (let look = 0; look < 3; look += 1) {
      target.storeChanged!();
      await settle();
    }
    target.failure = null;
    target.storeChanged!();
    await settle();
    target.storeChanged!();
    await settle();
    await cron.stop();

    expect(log.entries.filter((entry) => entry.level === 'error')).toHaveLength(1);
    expect(log.entries.filter((entry) => entry.message === 'cron ticks work again')).toHaveLength(1);
  });

  it('wakes the claim-ahead lead before the earliest next run, then the lead before the next one its look left', async () => {
    const { cron, timers, target } = trigger();
    target.claimAheadMs = 1000;
    target.next = new Date(5_000);
    await cron.start();
    const first = timers.delays();
    // The look at 4 000 claims the job due at 5 000, within its lead: the next is at 65 000.
    target.whileLooking = () => (target.next = new Date(65_000));

    timers.advance(4_000);
    await settle();
    const next = timers.delays();
    await cron.stop();

    expect(first).toEqual([4_000]);
    expect(target.looks).toBe(2);
    expect(next).toEqual([60_000]);
  });

  it('looks again at its time, not over and over, at a job due within the lead that its look left for want of a slot', async () => {
    const { cron, timers, target } = trigger();
    target.claimAheadMs = 1000;
    target.next = new Date(5_000);
    await cron.start();

    timers.advance(4_000);
    await settle();
    const delays = timers.delays();
    await cron.stop();

    expect(target.looks).toBe(2);
    expect(delays).toEqual([1_000]);
  });

  it('leaves runs more than a minute away to the minute tick', async () => {
    const { cron, timers, target } = trigger();
    target.next = new Date(3_600_000);

    await cron.start();

    expect(timers.delays()).toEqual([]);
    await cron.stop();
  });

  it('looks again shortly when another process held the tick lock', async () => {
    const { cron, timers, target } = trigger();
    target.lockBusy = true;

    await cron.start();

    expect(timers.delays()).toEqual([250]);
    await cron.stop();
  });

  it('looks when another process changed the job store', async () => {
    const { cron, target } = trigger();
    await cron.start();

    target.storeChanged!();
    await settle();

    expect(target.looks).toBe(2);
    await cron.stop();
    expect(target.unwatched).toBe(true);
  });

  it('looks when a run ends, so a job waiting for a slot starts at once', async () => {
    const { cron, target } = trigger();
    await cron.start();

    target.runFinished!();
    await settle();

    expect(target.looks).toBe(2);
    await cron.stop();
  });

  it('folds looks asked for during another into one right after it, never two at once', async () => {
    const { cron, target } = trigger();
    let release!: () => void;
    target.hold = new Promise<void>((resolve) => (release = resolve));

    const first = cron.start();
    await settle();
    void cron.look();
    void cron.look();
    target.hold = null;
    release();
    await first;
    await settle();

    expect(target.looks).toBe(2);
    expect(target.peak).toBe(1);
    await cron.stop();
  });

  it('claims nothing after stop, whatever asks it to look', async () => {
    const { cron, timers, target } = trigger();
    target.next = new Date(5_000);
    await cron.start();

    await cron.stop();
    target.storeChanged?.();
    target.runFinished!();
    timers.advance(5_000);
    await settle();

    expect(target.looks).toBe(1);
    expect(timers.delays()).toEqual([]);
  });
});
