import { DeliveryLanes } from '../../../src/adapters/webhook/DeliveryLanes.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('DeliveryLanes', () => {
  it('runs each lane first in first out, at most perLane at once, and never lets one lane wait for another', async () => {
    const started: string[] = [];
    const gates = new Map<string, { promise: Promise<void>; resolve: () => void }>();
    const lanes = new DeliveryLanes<string>(2, async (item) => {
      started.push(item);
      const gate = deferred();
      gates.set(item, gate);
      await gate.promise;
    });

    for (const item of ['slow-1', 'slow-2', 'slow-3', 'slow-4']) lanes.push('slow', item);
    lanes.push('fast', 'fast-1');

    expect(started).toEqual(['slow-1', 'slow-2', 'fast-1']);
    expect(lanes.size).toBe(5);
    gates.get('slow-2')!.resolve();
    await gates.get('slow-2')!.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['slow-1', 'slow-2', 'fast-1', 'slow-3']);
    for (const item of ['slow-1', 'slow-3', 'fast-1']) gates.get(item)!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    gates.get('slow-4')!.resolve();
    await lanes.whenIdle();
    expect(started).toEqual(['slow-1', 'slow-2', 'fast-1', 'slow-3', 'slow-4']);
    expect(lanes.size).toBe(0);
  });

  it('after stopTaking hands back what waits, queues nothing new, and starts again when resumed', async () => {
    const gate = deferred();
    const done: string[] = [];
    const lanes = new DeliveryLanes<string>(1, async (item) => {
      await gate.promise;
      done.push(item);
    });
    lanes.push('telegram', 'a');
    lanes.push('telegram', 'b');

    expect(lanes.stopTaking()).toEqual(['b']);
    expect(lanes.push('telegram', 'c')).toBe(false);
    gate.resolve();
    await lanes.whenIdle();
    expect(done).toEqual(['a']);

    lanes.resumeTaking();
    expect(lanes.push('telegram', 'd')).toBe(true);
    await lanes.whenIdle();
    expect(done).toEqual(['a', 'd']);
  });
});
