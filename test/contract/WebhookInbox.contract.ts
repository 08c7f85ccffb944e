import type { WebhookEvent } from '../../src/domain/webhook/WebhookEvent.js';
import type { WebhookInbox } from '../../src/application/ports/WebhookInbox.js';
import type { ManualClock } from '../support/fakes/ManualClock.js';

export interface WebhookInboxSubject {
  inbox: WebhookInbox;
  /** The process holding `inbox` dies (kill -9) and a new one starts on the same storage. */
  restart: () => Promise<WebhookInbox>;
  /** The inboxes' clock (at T0 when the subject is made), which decides when a coalesced group is due. */
  clock: ManualClock;
  cleanup?: () => Promise<void>;
}

/** An accepted event; `n` makes the id and the delivery id distinct. */
/** An event of a coalescing route with `key`, received at `atMs`, its window `windowMs`. */
export function aCoalescedEvent(n: number, key: string, atMs: number, windowMs = 3000): WebhookEvent {
  return anEvent(n, { receivedAt: new Date(atMs).toISOString(), coalesce: { key, windowMs } });
}

export function anEvent(n: number, overrides: Partial<WebhookEvent> = {}): WebhookEvent {
  return {
    id: `event-${n}`,
    route: 'pr-review',
    event: 'pull_request',
    deliveryId: `delivery-${n}`,
    payload: { action: 'opened', number: n, pull_request: { title: `PR ${n}`, labels: [{ name: 'bug' }] } },
    receivedAt: '2026-06-01T08:00:00.000Z',
    ...overrides,
  };
}

async function drain(inbox: WebhookInbox): Promise<string[]> {
  const ids: string[] = [];
  for (let event = await inbox.claimNext(); event !== null; event = await inbox.claimNext()) ids.push(event.id);
  return ids;
}

/**
 * What every WebhookInbox promises (src/application/ports/WebhookInbox.ts). Each test gets a
 * fresh, empty inbox from `makeSubject`.
 */
/** An event as handed out, without the inbox's note on whether it may have run before. */
function handedOut(event: WebhookEvent | null): WebhookEvent | null {
  if (event === null) return null;
  const { resumed: _resumed, ...stored } = event;
  return stored;
}

export function describeWebhookInboxContract(name: string, makeSubject: () => Promise<WebhookInboxSubject>): void {
  describe(`${name} (WebhookInbox contract)`, () => {
    let subject: WebhookInboxSubject;
    let inbox: WebhookInbox;

    beforeEach(async () => {
      subject = await makeSubject();
      inbox = subject.inbox;
    });

    afterEach(async () => {
      await subject.cleanup?.();
    });

    it('hands out nothing and has nothing pending when nothing was accepted', async () => {
      expect(await inbox.claimNext()).toBeNull();
      expect(await inbox.pending()).toBe(0);
      expect(await inbox.recover()).toBe(0);
    });

    it('hands out an accepted event field for field', async () => {
      const event = anEvent(1, { payload: { text: 'ünïcode ✓', nested: { list: [1, null, true] } } });
      await inbox.accept(event);
      expect(handedOut(await inbox.claimNext())).toEqual(event);
    });

    it('keeps the traceparent of the request that accepted an event, with a delivery key too, also after a restart', async () => {
      const traced = anEvent(1, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
      const keyed = anEvent(2, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
      await inbox.accept(traced);
      await inbox.accept(keyed, undefined, 'pr-review\ndelivery-2');
      await inbox.accept(anEvent(3));

      const after = await subject.restart();
      await after.recover();
      expect([await after.claimNext(), await after.claimNext(), await after.claimNext()].map((event) => event?.traceparent)).toEqual([
        traced.traceparent,
        keyed.traceparent,
        undefined,
      ]);
    });

    it('hands out an event accepted with the JSON text of its payload as that payload, also after a restart', async () => {
      const compact = anEvent(1, { payload: { text: 'ünïcode ✓ \u2028', list: [1, { b: null }] } });
      const pretty = anEvent(2, { payload: { a: { b: [1, 2] } } });
      await inbox.accept(compact, ' {"text":"ünïcode ✓ \\u2028","list":[1,{"b":null}]} ');
      await inbox.accept(pretty, '{\n  "a": {\n    "b": [1, 2]\n  }\n}\n');

      expect(handedOut(await inbox.claimNext())).toEqual(compact);
      const after = await subject.restart();
      await after.recover();
      expect(await drain(after)).toEqual(['event-1', 'event-2']);
      const again = await subject.restart();
      await again.recover();
      expect(handedOut(await again.claimNext())).toEqual(compact);
      expect(handedOut(await again.claimNext())).toEqual(pretty);
    });

    it('never says that no run of an event can have started when one may have (after a restart)', async () => {
      await inbox.accept(anEvent(1));
      await inbox.accept(anEvent(2));
      const first = await inbox.claimNext();
      expect(first?.resumed).not.toBe(true);
      const after = await subject.restart();
      await after.recover();
      const handed = [await after.claimNext(), await after.claimNext()];
      expect(handed.map((event) => event?.id)).toEqual(['event-1', 'event-2']);
      for (const event of handed) expect(event?.resumed).not.toBe(false);
    });

    it('hands out events in acceptance order, whatever their receivedAt says', async () => {
      await inbox.accept(anEvent(1, { receivedAt: '2026-06-01T09:00:00.000Z' }));
      await inbox.accept(anEvent(2, { receivedAt: '2026-06-01T07:00:00.000Z' }));
      await inbox.accept(anEvent(3, { receivedAt: '2026-06-01T08:00:00.000Z' }));
      expect(await drain(inbox)).toEqual(['event-1', 'event-2', 'event-3']);
    });

    it('passes over the events of the routes it is told to skip, which keep their places', async () => {
      await inbox.accept(anEvent(1, { route: 'busy' }));
      await inbox.accept(anEvent(2, { route: 'busy' }));
      await inbox.accept(anEvent(3, { route: 'quiet' }));
      await inbox.accept(anEvent(4, { route: 'other' }));

      expect((await inbox.claimNext(new Set(['busy'])))?.id).toBe('event-3');
      expect(await inbox.claimNext(new Set(['busy', 'other']))).toBeNull();
      expect(await drain(inbox)).toEqual(['event-1', 'event-2', 'event-4']);
    });

    it('still hands events out in order after a restart when told which routes to skip', async () => {
      await inbox.accept(anEvent(1, { route: 'busy' }));
      await inbox.accept(anEvent(2, { route: 'quiet' }));
      const again = await subject.restart();

      expect((await again.claimNext(new Set(['busy'])))?.id).toBe('event-2');
      expect((await again.claimNext())?.id).toBe('event-1');
    });

    it('hands each event out once, also to claims made at the same time', async () => {
      for (const n of [1, 2, 3, 4, 5]) await inbox.accept(anEvent(n));
      const claimed = await Promise.all(Array.from({ length: 8 }, () => inbox.claimNext()));
      const ids = claimed.filter((event) => event !== null).map((event) => event!.id);
      expect(ids.sort()).toEqual(['event-1', 'event-2', 'event-3', 'event-4', 'event-5']);
    });

    it('counts claimed and waiting events as pending until they are completed', async () => {
      await inbox.accept(anEvent(1));
      await inbox.accept(anEvent(2));
      const first = await inbox.claimNext();
      expect(await inbox.pending()).toBe(2);

      await inbox.complete(first!.id);

      expect(await inbox.pending()).toBe(1);
      expect((await inbox.claimNext())!.id).toBe('event-2');
    });

    it('completes idempotently, and ignores an id it does not hold', async () => {
      await inbox.accept(anEvent(1));
      await inbox.claimNext();
      await inbox.complete('event-1');
      await inbox.complete('event-1');
      await inbox.complete('never-accepted');
      expect(await inbox.pending()).toBe(0);
    });

    it('does not hand a claimed event out again while its claimant lives', async () => {
      await inbox.accept(anEvent(1));
      await inbox.claimNext();
      expect(await inbox.recover()).toBe(0);
      expect(await inbox.claimNext()).toBeNull();
    });

    it('keeps waiting events across a restart, in order', async () => {
      await inbox.accept(anEvent(1));
      await inbox.accept(anEvent(2));

      const after = await subject.restart();

      expect(await after.recover()).toBe(0);
      expect(await after.pending()).toBe(2);
      expect(await drain(after)).toEqual(['event-1', 'event-2']);
    });

    it('hands out again after a restart an event whose run never completed, in its old place', async () => {
      await inbox.accept(anEvent(1));
      await inbox.accept(anEvent(2));
      await inbox.accept(anEvent(3));
      await inbox.claimNext();
      const second = await inbox.claimNext();
      await inbox.complete(second!.id);

      const after = await subject.restart();

      expect(await after.recover()).toBe(1);
      expect(await drain(after)).toEqual(['event-1', 'event-3']);
    });

    it('after close, starts afresh from what it stored when it is used again', async () => {
      await inbox.accept(anEvent(1));
      await inbox.accept(anEvent(2));
      await inbox.claimNext();
      await inbox.complete('event-1');

      await inbox.close();

      expect(await inbox.pending()).toBe(1);
      expect((await inbox.claimNext())!.id).toBe('event-2');
    });

    it('stores a delivery the sender named once within the hour, also across a restart and after its run ended', async () => {
      const now = new Date().toISOString();
      const event = (n: number) => anEvent(n, { receivedAt: now });
      expect(await inbox.accept(event(1), undefined, 'github:d-1')).toBe(true);
      expect(await inbox.accept(event(2), undefined, 'github:d-1')).toBe(false);
      expect(await inbox.accept(event(3), undefined, 'github:d-3')).toBe(true);
      const first = await inbox.claimNext();
      await inbox.complete(first!.id);

      const restarted = await subject.restart();

      expect(await restarted.accept(event(4), undefined, 'github:d-1')).toBe(false);
      expect(await restarted.accept(event(5), undefined, 'github:d-3')).toBe(false);
      expect(await restarted.accept(event(6), undefined, 'github:d-6')).toBe(true);
      expect(await restarted.accept(event(7))).toBe(true);
      expect(await drain(restarted)).toEqual(['event-3', 'event-6', 'event-7']);
    });

    it('remembers a delivery for the hour across two restarts, once the process that took its event over has finished it', async () => {
      const now = new Date().toISOString();
      expect(await inbox.accept(anEvent(1, { receivedAt: now }), undefined, 'github:d-1')).toBe(true);
      const second = await subject.restart();
      await second.recover();
      await second.complete((await second.claimNext())!.id);

      const third = await subject.restart();
      await third.recover();

      expect(await third.accept(anEvent(2, { receivedAt: now }), undefined, 'github:d-1')).toBe(false);
      expect(await drain(third)).toEqual([]);
    });

    it('never hands out again an event that a process taking over completed, after that process died too', async () => {
      for (const n of [1, 2, 3, 4, 5]) await inbox.accept(anEvent(n));
      const second = await subject.restart();
      await second.recover();
      for (const expected of ['event-1', 'event-2']) {
        const event = await second.claimNext();
        expect(event?.id).toBe(expected);
        await second.complete(event!.id);
      }

      const third = await subject.restart();
      await third.recover();

      expect(await drain(third)).toEqual(['event-3', 'event-4', 'event-5']);
    });

    it('never hands out again what each of several processes taking over in turn completed', async () => {
      for (const n of [1, 2, 3, 4, 5]) await inbox.accept(anEvent(n));
      let current: typeof inbox;
      for (const expected of ['event-1', 'event-2', 'event-3']) {
        current = await subject.restart();
        await current.recover();
        const event = await current.claimNext();
        expect(event?.id).toBe(expected);
        await current.complete(event!.id);
      }

      const last = await subject.restart();
      await last.recover();

      expect(await drain(last)).toEqual(['event-4', 'event-5']);
    });

    it('never hands out again an event completed before a restart', async () => {
      await inbox.accept(anEvent(1));
      await inbox.claimNext();
      await inbox.complete('event-1');

      const after = await subject.restart();

      expect(await after.recover()).toBe(0);
      expect(await after.claimNext()).toBeNull();
    });

    describe('coalescing', () => {
      let start = 0;
      beforeEach(() => {
        start = subject.clock.now().getTime();
      });
      const at = (ms: number) => subject.clock.set(new Date(start + ms));
      const aCoalesced = (n: number, key: string, ms: number) => aCoalescedEvent(n, key, start + ms);

      it("hands out each coalesced event's traceparent with it", async () => {
        await inbox.accept({ ...aCoalesced(1, 'octo/a#1', 0), traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
        await inbox.accept(aCoalesced(2, 'octo/a#1', 1000), undefined, 'pr-review\ndelivery-2');
        at(5000);
        const run = await inbox.claimNext();
        expect(run?.coalesced?.map((member) => member.traceparent)).toEqual([
          '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          undefined,
        ]);
      });

      it('hands out the events of one key as one run only once the window after the last has passed', async () => {
        await inbox.accept(aCoalesced(1, 'octo/a#1', 0));
        await inbox.accept(aCoalesced(2, 'octo/a#1', 1000));
        await inbox.accept(aCoalesced(3, 'octo/a#1', 2000));
        at(4999);
        expect(await inbox.claimNext()).toBeNull();
        at(5000);
        const run = await inbox.claimNext();
        expect(run?.id).toBe('event-1');
        expect(run?.deliveryId).toBe('delivery-3');
        expect(run?.payload).toEqual(anEvent(3).payload);
        expect(run?.coalesced?.map((member) => [member.id, member.deliveryId])).toEqual([
          ['event-1', 'delivery-1'],
          ['event-2', 'delivery-2'],
          ['event-3', 'delivery-3'],
        ]);
        expect(run?.coalesced?.[0]?.payload).toEqual(anEvent(1).payload);
        expect(await inbox.claimNext()).toBeNull();
        expect(await inbox.pending()).toBe(3);
        await inbox.complete('event-1');
        expect(await inbox.pending()).toBe(0);
        expect(await inbox.claimNext()).toBeNull();
      });

      it('keeps other keys in groups of their own and hands out events of other routes meanwhile', async () => {
        await inbox.accept(aCoalesced(1, 'a', 0));
        await inbox.accept(aCoalesced(2, 'b', 500));
        await inbox.accept(anEvent(3, { route: 'plain' }));
        at(1000);
        expect((await inbox.claimNext())?.id).toBe('event-3');
        at(3000);
        expect((await inbox.claimNext())?.coalesced?.map((member) => member.id)).toEqual(['event-1']);
        expect(await inbox.claimNext()).toBeNull();
        at(3500);
        expect((await inbox.claimNext())?.coalesced?.map((member) => member.id)).toEqual(['event-2']);
      });

      it('starts a new group with an event of the key accepted after its group was handed out', async () => {
        await inbox.accept(aCoalesced(1, 'a', 0));
        at(3000);
        const first = await inbox.claimNext();
        await inbox.accept(aCoalesced(2, 'a', 3100));
        at(6099);
        expect(await inbox.claimNext()).toBeNull();
        await inbox.complete(first!.id);
        at(6100);
        expect((await inbox.claimNext())?.coalesced?.map((member) => member.id)).toEqual(['event-2']);
      });

      it('gives the newest 20 payloads of a larger group, and lists every event', async () => {
        for (let n = 1; n <= 25; n += 1) await inbox.accept(aCoalesced(n, 'a', n));
        at(10_000);
        const run = await inbox.claimNext();
        expect(run?.coalesced).toHaveLength(25);
        expect(run?.coalesced?.filter((member) => member.payload !== undefined).map((member) => member.id)).toEqual(
          Array.from({ length: 20 }, (_, index) => `event-${index + 6}`),
        );
      });

      it('keeps a group waiting across a restart inside its window, and hands it out once', async () => {
        await inbox.accept(aCoalesced(1, 'a', 0));
        await inbox.accept(aCoalesced(2, 'a', 1000));
        inbox = await subject.restart();
        await inbox.recover();
        at(2000);
        expect(await inbox.claimNext()).toBeNull();
        await inbox.accept(aCoalesced(3, 'a', 2500));
        at(5499);
        expect(await inbox.claimNext()).toBeNull();
        at(5500);
        const run = await inbox.claimNext();
        expect(run?.coalesced?.map((member) => member.id)).toEqual(['event-1', 'event-2', 'event-3']);
        await inbox.complete(run!.id);
        expect(await inbox.claimNext()).toBeNull();
        expect(await inbox.pending()).toBe(0);
      });

      it('hands a group cut short by a restart out again as it was, without the events accepted after it', async () => {
        await inbox.accept(aCoalesced(1, 'a', 0));
        await inbox.accept(aCoalesced(2, 'a', 1000));
        at(4000);
        expect((await inbox.claimNext())?.id).toBe('event-1');
        await inbox.accept(aCoalesced(3, 'a', 4100));
        inbox = await subject.restart();
        await inbox.recover();
        const again = await inbox.claimNext();
        expect(again?.id).toBe('event-1');
        expect(again?.resumed).not.toBe(false);
        expect(again?.coalesced?.map((member) => member.id)).toEqual(['event-1', 'event-2']);
        expect(await inbox.claimNext()).toBeNull();
        await inbox.complete('event-1');
        at(7100);
        expect((await inbox.claimNext())?.coalesced?.map((member) => member.id)).toEqual(['event-3']);
      });

      it('never hands out again a group completed before a restart', async () => {
        await inbox.accept(aCoalesced(1, 'a', 0));
        await inbox.accept(aCoalesced(2, 'a', 10));
        at(4000);
        const run = await inbox.claimNext();
        await inbox.complete(run!.id);
        inbox = await subject.restart();
        await inbox.recover();
        expect(await inbox.claimNext()).toBeNull();
        expect(await inbox.pending()).toBe(0);
      });

      it('passes over the groups of the routes it is told to skip', async () => {
        await inbox.accept(aCoalesced(1, 'a', 0));
        at(4000);
        expect(await inbox.claimNext(new Set(['pr-review']))).toBeNull();
        expect((await inbox.claimNext())?.id).toBe('event-1');
      });
    });
  });
}
