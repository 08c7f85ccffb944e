import { jest } from '@jest/globals';
import { IdleWatchdog } from '../../../src/adapters/agents/IdleWatchdog.js';

// The watchdog's timers and its monotonic clock (performance.now) move only when a test moves them.
beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('IdleWatchdog', () => {
  it('fires once the budget passes without activity, not before', () => {
    let fired = 0;
    const watchdog = new IdleWatchdog(40, () => (fired += 1));

    watchdog.start();
    jest.advanceTimersByTime(39);
    expect(watchdog.fired).toBe(false);
    jest.advanceTimersByTime(1);

    expect(watchdog.fired).toBe(true);
    expect(fired).toBe(1);
    jest.advanceTimersByTime(1_000);
    expect(fired).toBe(1);
  });

  it('does not fire while activity keeps coming, and fires a whole budget after it stops', () => {
    const watchdog = new IdleWatchdog(80, () => undefined);
    watchdog.start();

    for (let touches = 0; touches < 30; touches += 1) {
      jest.advanceTimersByTime(79);
      watchdog.touch();
    }
    expect(watchdog.fired).toBe(false);
    jest.advanceTimersByTime(79);
    expect(watchdog.fired).toBe(false);
    jest.advanceTimersByTime(1);
    expect(watchdog.fired).toBe(true);
  });

  it('never fires after stop', () => {
    let fired = false;
    const watchdog = new IdleWatchdog(20, () => (fired = true));
    watchdog.start();
    watchdog.stop();

    jest.advanceTimersByTime(10_000);

    expect(fired).toBe(false);
  });

  it('never fires without a budget', () => {
    let fired = false;
    const watchdog = new IdleWatchdog(null, () => (fired = true));
    watchdog.start();

    jest.advanceTimersByTime(10_000);

    expect(fired).toBe(false);
    watchdog.stop();
  });
});
