import { RunStops } from '../../../src/application/runs/RunStops.js';
import { RELEASES_PER_TURN } from '../../../src/domain/PermitPool.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';

const settle = async () => {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('the stops of the runs under way', () => {
  it('counts the time limit of a run claimed ahead from its start, not from its claim', async () => {
    const timer = new ManualTimer();
    const stops = new RunStops(timer);
    const guard = stops.guard('cron:a@slot', 2, undefined, 600);

    timer.advance(2_000);
    await settle();
    const before = guard.signal.aborted;
    timer.advance(600);
    await settle();

    expect(before).toBe(false);
    expect(guard.signal.aborted).toBe(true);
    guard.release();
  });

  it('lets the runs of one slot start on one timer, and a cancelled one at once', async () => {
    const timer = new ManualTimer();
    const stops = new RunStops(timer);
    const slot = new Date('2026-06-01T12:00:00Z');
    const cancelled = new AbortController();
    const started: string[] = [];
    const waits = ['a', 'b', 'c'].map((name) =>
      stops.untilStart(slot, 500, name === 'c' ? cancelled.signal : undefined).then(() => void started.push(name)),
    );
    const timers = timer.pending;

    cancelled.abort();
    await settle();
    const afterCancel = [...started];
    timer.advance(499);
    await settle();
    const early = [...started];
    timer.advance(1);
    await Promise.all(waits);

    expect(timers).toBe(1);
    expect(afterCancel).toEqual(['c']);
    expect(early).toEqual(['c']);
    expect(started).toEqual(['c', 'a', 'b']);
  });

  it('lets the runs of one slot go a few score per turn of the event loop', async () => {
    const timer = new ManualTimer();
    const started: number[] = [];
    const turns: number[] = [];
    // At each turn, how many had started before it.
    Object.assign(timer, {
      yieldTurn: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        turns.push(started.length);
      },
    });
    const stops = new RunStops(timer);
    const slot = new Date('2026-06-01T12:00:00Z');
    const waits = Array.from({ length: 2 * RELEASES_PER_TURN + 1 }, (_, i) => stops.untilStart(slot, 500).then(() => void started.push(i)));

    timer.advance(500);
    await Promise.all(waits);

    expect(started).toHaveLength(2 * RELEASES_PER_TURN + 1);
    expect(turns).toEqual([RELEASES_PER_TURN, 2 * RELEASES_PER_TURN]);
  });

  it('does not wait for a start that has come', async () => {
    const stops = new RunStops(new ManualTimer());

    await expect(stops.untilStart(new Date(0), 0)).resolves.toBeUndefined();
  });
});
