import { IdleWatchdog } from '../../../src/application/agent/IdleWatchdog.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';

/** Lets the watchdog see a wait that ended. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('IdleWatchdog', () => {
  let timer: ManualTimer;

  beforeEach(() => {
    timer = new ManualTimer();
  });

  async function advance(ms: number): Promise<void> {
    timer.advance(ms);
    await settle();
  }

  it('fires once the budget passes without activity, not before', async () => {
    let fired = 0;
    const watchdog = new IdleWatchdog(40, () => (fired += 1), timer);

    watchdog.start();
    await advance(39);
    expect(watchdog.fired).toBe(false);
    await advance(1);

    expect(watchdog.fired).toBe(true);
    expect(fired).toBe(1);
    await advance(1_000);
    expect(fired).toBe(1);
  });

  it('does not fire during a pause, however long, and counts a whole budget again from its end', async () => {
    const watchdog = new IdleWatchdog(40, () => undefined, timer);
    watchdog.start();
    await advance(30);

    watchdog.pause();
    for (let step = 0; step < 10; step += 1) await advance(40);
    expect(watchdog.fired).toBe(false);
    watchdog.resume();
    await advance(39);
    expect(watchdog.fired).toBe(false);
    await advance(1);

    expect(watchdog.fired).toBe(true);
  });

  it('does not fire while activity keeps coming, and fires a whole budget after it stops', async () => {
    const watchdog = new IdleWatchdog(80, () => undefined, timer);
    watchdog.start();

    for (let touches = 0; touches < 30; touches += 1) {
      await advance(79);
      watchdog.touch();
    }
    expect(watchdog.fired).toBe(false);
    await advance(79);
    expect(watchdog.fired).toBe(false);
    await advance(1);
    expect(watchdog.fired).toBe(true);
  });

  it('never fires after stop, and leaves no wait behind', async () => {
    let fired = false;
    const watchdog = new IdleWatchdog(20, () => (fired = true), timer);
    watchdog.start();
    watchdog.stop();

    await advance(10_000);

    expect(fired).toBe(false);
    expect(timer.pending).toBe(0);
  });

  it('never fires without a budget', async () => {
    let fired = false;
    const watchdog = new IdleWatchdog(null, () => (fired = true), timer);
    watchdog.start();

    await advance(10_000);

    expect(fired).toBe(false);
    expect(timer.pending).toBe(0);
    watchdog.stop();
  });
});
