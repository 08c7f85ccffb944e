import { DeliveryLanes, type LaneWork } from '../../../src/application/delivery/DeliveryLanes.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('DeliveryLanes', () => {
  it('runs each lane first in first out, at most perLane at once, and never lets one lane wait for another', async () => {
    const started: string[] = [];
    const gates = new Map<string, { promise: Promise<void>; resolve: () => void }>();
    const lanes = new DeliveryLanes(2);
    const work = (item: string): LaneWork => ({
      group: 'webhook',
      deliver: async () => {
        started.push(item);
        const gate = deferred();
        gates.set(item, gate);
        await gate.promise;
      },
    });

    for (const item of ['slow-1', 'slow-2', 'slow-3', 'slow-4']) lanes.push('slow', work(item));
    lanes.push('fast', work('fast-1'));

    expect(started).toEqual(['slow-1', 'slow-2', 'fast-1']);
    expect(lanes.size()).toBe(5);
    gates.get('slow-2')!.resolve();
    await gates.get('slow-2')!.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['slow-1', 'slow-2', 'fast-1', 'slow-3']);
    for (const item of ['slow-1', 'slow-3', 'fast-1']) gates.get(item)!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    gates.get('slow-4')!.resolve();
    await lanes.whenIdle();
    expect(started).toEqual(['slow-1', 'slow-2', 'fast-1', 'slow-3', 'slow-4']);
    expect(lanes.size()).toBe(0);
  });

  it('after stopTaking hands back what waits, queues nothing new, and starts again when resumed', async () => {
    const gate = deferred();
    const done: string[] = [];
    const lanes = new DeliveryLanes(1);
    const work = (item: string): LaneWork => ({
      group: 'webhook',
      deliver: async () => {
        await gate.promise;
        done.push(item);
      },
    });
    const a = work('a');
    const b = work('b');
    lanes.push('telegram', a);
    lanes.push('telegram', b);

    expect(lanes.stopTaking('webhook')).toEqual([b]);
    expect(lanes.push('telegram', work('c'))).toBe(false);
    gate.resolve();
    await lanes.whenIdle();
    expect(done).toEqual(['a']);

    lanes.resumeTaking('webhook');
    expect(lanes.push('telegram', work('d'))).toBe(true);
    await lanes.whenIdle();
    expect(done).toEqual(['a', 'd']);
  });

  it('shares one lane per platform between groups, and counts, waits for and stops each group on its own', async () => {
    const gate = deferred();
    const done: string[] = [];
    const lanes = new DeliveryLanes(1);
    const work = (group: string, item: string): LaneWork => ({
      group,
      deliver: async () => {
        if (item === 'cron-1') await gate.promise;
        done.push(item);
      },
    });
    lanes.push('platform:telegram', work('cron', 'cron-1'));
    lanes.push('platform:telegram', work('webhook', 'webhook-1'));
    lanes.push('platform:telegram', work('cron', 'cron-2'));

    // One place in the lane: the webhook answer waits behind the cron one, as it would behind another webhook answer.
    expect(done).toEqual([]);
    expect(lanes.size('cron')).toBe(2);
    expect(lanes.size('webhook')).toBe(1);
    expect(lanes.stopTaking('cron').length).toBe(1);
    expect(lanes.push('platform:telegram', work('cron', 'cron-3'))).toBe(false);
    expect(lanes.push('platform:slack', work('webhook', 'webhook-2'))).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toEqual(['webhook-2']);
    gate.resolve();
    await lanes.whenIdle();
    expect(done).toEqual(['webhook-2', 'cron-1', 'webhook-1']);
  });
});
