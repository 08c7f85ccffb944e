import { afterEach, describe, expect, it } from '@jest/globals';
import type { EventOutbox } from '../../src/application/ports/EventOutbox.js';
import type { OutboundEvent } from '../../src/domain/events/outboundEvents.js';

export interface EventOutboxStores {
  /** One more instance on the same, initially empty, store: a restarted gateway, or another replica. */
  another(): Promise<EventOutbox>;
  cleanup?(): Promise<void>;
}

const T0 = Date.parse('2030-01-01T01:00:00.000Z');
/** The instant `seconds` after T0. */
const at = (seconds: number) => new Date(T0 + seconds * 1000);

function event(id: string, type: OutboundEvent['type'] = 'run.finished'): OutboundEvent {
  return {
    id,
    type,
    timestamp: at(0).toISOString(),
    data: { id: id.slice(4), status: 'ok', note: 'é ✓ "quoted"' },
    subject: { kind: 'webhook', route: 'ci' },
  };
}

/**
 * What every EventOutbox promises (src/application/ports/EventOutbox.ts): entries kept once per
 * subscription and event id, handed out when due to one claim at a time, retried, removed once
 * sent and listed once given up on. Each test gets a fresh, empty store from `make`.
 */
export function describeEventOutboxContract(name: string, make: () => Promise<EventOutboxStores>): void {
  describe(`${name} (EventOutbox contract)`, () => {
    let stores: EventOutboxStores;
    let outbox: EventOutbox;

    const fresh = async () => {
      stores = await make();
      outbox = await stores.another();
    };

    afterEach(async () => {
      await stores?.cleanup?.();
    });

    it('hands out an added entry, with its event as added, and none once it is sent', async () => {
      await fresh();
      await outbox.add([{ subscription: 'ops', event: event('msg_a') }], at(0));

      const claimed = await outbox.claimDue(at(0), 10, 60_000);

      expect(claimed).toEqual([{ subscription: 'ops', event: event('msg_a'), createdAt: at(0), attempts: 0, lastError: null }]);
      await outbox.sent('ops', 'msg_a');
      expect(await outbox.claimDue(at(120), 10, 60_000)).toEqual([]);
    });

    it('keeps an event added twice once, and the same event once for each subscription', async () => {
      await fresh();
      await outbox.add([{ subscription: 'ops', event: event('msg_a') }], at(0));
      await outbox.add(
        [
          { subscription: 'ops', event: event('msg_a') },
          { subscription: 'audit', event: event('msg_a') },
        ],
        at(5),
      );

      const claimed = await outbox.claimDue(at(5), 10, 60_000);

      expect(claimed.map((entry) => entry.subscription).sort()).toEqual(['audit', 'ops']);
      expect(claimed.find((entry) => entry.subscription === 'ops')?.createdAt).toEqual(at(0));
    });

    it('hands a claimed entry to no other claim, from any instance, until its claim runs out', async () => {
      await fresh();
      const replica = await stores.another();
      await outbox.add([{ subscription: 'ops', event: event('msg_a') }], at(0));

      expect(await outbox.claimDue(at(0), 10, 60_000)).toHaveLength(1);
      expect(await replica.claimDue(at(30), 10, 60_000)).toEqual([]);
      expect(await outbox.claimDue(at(59), 10, 60_000)).toEqual([]);
      expect((await replica.claimDue(at(60), 10, 60_000)).map((entry) => entry.event.id)).toEqual(['msg_a']);
    });

    it('hands each due entry to exactly one of two claims made at once', async () => {
      await fresh();
      const replica = await stores.another();
      await outbox.add(
        Array.from({ length: 12 }, (_, index) => ({ subscription: 'ops', event: event(`msg_${index}`) })),
        at(0),
      );

      const [first, second] = await Promise.all([outbox.claimDue(at(1), 8, 60_000), replica.claimDue(at(1), 8, 60_000)]);

      const ids = [...first, ...second].map((entry) => entry.event.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeGreaterThanOrEqual(8);
    });

    it('hands out the oldest first, at most `limit`', async () => {
      await fresh();
      await outbox.add([{ subscription: 'ops', event: event('msg_new') }], at(2));
      await outbox.add([{ subscription: 'ops', event: event('msg_old') }], at(1));

      expect((await outbox.claimDue(at(3), 1, 60_000)).map((entry) => entry.event.id)).toEqual(['msg_old']);
    });

    it('hands a retried entry out again only when its next attempt is due, with its attempts and error', async () => {
      await fresh();
      await outbox.add([{ subscription: 'ops', event: event('msg_a') }], at(0));
      await outbox.claimDue(at(0), 10, 60_000);

      await outbox.retryAt('ops', 'msg_a', at(10), 'the receiver answered HTTP 500');

      expect(await outbox.claimDue(at(9), 10, 60_000)).toEqual([]);
      expect(await outbox.claimDue(at(10), 10, 60_000)).toEqual([
        { subscription: 'ops', event: event('msg_a'), createdAt: at(0), attempts: 1, lastError: 'the receiver answered HTTP 500' },
      ]);
    });

    it('lists an entry given up on, newest first, hands it out no more, and does not take it again', async () => {
      await fresh();
      await outbox.add(
        [
          { subscription: 'ops', event: event('msg_a') },
          { subscription: 'ops', event: event('msg_b', 'run.failed') },
        ],
        at(0),
      );
      await outbox.claimDue(at(0), 10, 60_000);
      await outbox.giveUp('ops', 'msg_a', 'the receiver answered HTTP 410', at(1));
      await outbox.giveUp('ops', 'msg_b', 'no answer', at(2));
      await outbox.add([{ subscription: 'ops', event: event('msg_a') }], at(3));

      expect(await outbox.claimDue(at(100), 10, 60_000)).toEqual([]);
      expect(await outbox.failedCount()).toBe(2);
      const failed = await (await stores.another()).failed(10);
      expect(failed.map((each) => [each.event.id, each.event.type, each.attempts, each.error])).toEqual([
        ['msg_b', 'run.failed', 1, 'no answer'],
        ['msg_a', 'run.finished', 1, 'the receiver answered HTTP 410'],
      ]);
      expect(failed[1]).toMatchObject({ subscription: 'ops', createdAt: at(0), failedAt: at(1), event: event('msg_a') });
      expect(await outbox.failed(1)).toHaveLength(1);
    });

    it('puts an entry given up on back to wait when it is resent: due now, its attempts afresh, its event and id as they were', async () => {
      await fresh();
      await outbox.add([{ subscription: 'ops', event: event('msg_a') }], at(0));
      await outbox.claimDue(at(0), 10, 60_000);
      await outbox.giveUp('ops', 'msg_a', 'no answer', at(1));

      expect(await outbox.resend('ops', 'msg_a', at(50))).toBe(true);
      expect(await outbox.resend('ops', 'msg_a', at(51))).toBe(false);
      expect(await outbox.resend('ops', 'msg_none', at(51))).toBe(false);

      expect(await outbox.failedCount()).toBe(0);
      const [again] = await (await stores.another()).claimDue(at(50), 10, 60_000);
      expect(again).toMatchObject({ subscription: 'ops', event: event('msg_a'), attempts: 0, createdAt: at(50) });
    });

    it('keeps what waits for a restarted instance', async () => {
      await fresh();
      await outbox.add([{ subscription: 'ops', event: event('msg_a') }], at(0));

      const restarted = await stores.another();

      expect((await restarted.claimDue(at(0), 10, 60_000)).map((entry) => entry.event.id)).toEqual(['msg_a']);
    });

    it('lists nothing and counts nothing on an empty store', async () => {
      await fresh();
      expect(await outbox.failed(10)).toEqual([]);
      expect(await outbox.failedCount()).toBe(0);
      expect(await outbox.claimDue(at(0), 10, 60_000)).toEqual([]);
    });
  });
}
