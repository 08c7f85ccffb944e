import { IdleWatchdog } from '../../../src/adapters/agents/IdleWatchdog.js';
import { eventually } from '../../helpers/processLiveness.js';

describe('IdleWatchdog', () => {
  it('fires once the budget passes without activity', async () => {
    let fired = 0;
    const watchdog = new IdleWatchdog(40, () => (fired += 1));

    watchdog.start();

    expect(await eventually(() => watchdog.fired)).toBe(true);
    expect(fired).toBe(1);
  });

  it('does not fire while activity keeps coming, and fires after it stops', async () => {
    const watchdog = new IdleWatchdog(80, () => undefined);
    watchdog.start();
    const startedAt = Date.now();
    const ticker = setInterval(() => watchdog.touch(), 10);

    await eventually(() => Date.now() - startedAt >= 300, 2000);
    clearInterval(ticker);

    expect(watchdog.fired).toBe(false);
    expect(await eventually(() => watchdog.fired)).toBe(true);
  });

  it('never fires after stop', async () => {
    let fired = false;
    const watchdog = new IdleWatchdog(20, () => (fired = true));
    watchdog.start();
    watchdog.stop();
    const stoppedAt = Date.now();

    await eventually(() => Date.now() - stoppedAt >= 100, 1000);

    expect(fired).toBe(false);
  });

  it('never fires without a budget', async () => {
    let fired = false;
    const watchdog = new IdleWatchdog(null, () => (fired = true));
    watchdog.start();
    const startedAt = Date.now();

    await eventually(() => Date.now() - startedAt >= 60, 1000);

    expect(fired).toBe(false);
    watchdog.stop();
  });
});
