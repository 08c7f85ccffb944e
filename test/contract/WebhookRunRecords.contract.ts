import type { WebhookRunRecords } from '../../src/application/ports/WebhookRunRecords.js';
import type { WebhookRunRecord } from '../../src/domain/webhook/webhookRunRecord.js';

export interface WebhookRunRecordsSubject {
  records: WebhookRunRecords;
  cleanup?: () => Promise<void>;
}

/** The record of event `n` on `route`, started n minutes after 08:00 UTC; `overrides` replace fields. */
export function aRunRecord(n: number, overrides: Partial<WebhookRunRecord> = {}): WebhookRunRecord {
  const minute = String(n).padStart(2, '0');
  return {
    eventId: `event${n}`,
    route: 'pr-review',
    event: 'pull_request',
    deliveryId: `delivery-${n}`,
    receivedAt: `2026-06-01T08:${minute}:00.000Z`,
    startedAt: `2026-06-01T08:${minute}:02.000Z`,
    outcome: 'delivered',
    deliveredTo: 'octo/widgets#12',
    prompt: `Review PR #${n}`,
    answer: `Looks fine (${n}).`,
    error: null,
    ...overrides,
  };
}

/** What every WebhookRunRecords promises; each test gets a fresh store keeping `keep` records per route. */
export function describeWebhookRunRecordsContract(name: string, makeSubject: (keep: number) => Promise<WebhookRunRecordsSubject>): void {
  describe(`${name} (WebhookRunRecords contract)`, () => {
    let subject: WebhookRunRecordsSubject;
    const use = async (keep = 50) => {
      subject = await makeSubject(keep);
      return subject.records;
    };

    afterEach(async () => {
      await subject?.cleanup?.();
    });

    it('finds nothing and lists nothing while nothing was saved', async () => {
      const records = await use();
      expect(await records.find('pr-review', 'event1')).toBeNull();
      expect(await records.list({ limit: 10 })).toEqual([]);
      expect(await records.list({ route: 'pr-review', limit: 10 })).toEqual([]);
    });

    it('gives back exactly what was saved, whatever the answer and prompt hold', async () => {
      const records = await use();
      const record = aRunRecord(1, {
        event: 'odd\nkind \\ with a backslash',
        prompt: '## Prompt\n\n```\ncode\n```\n',
        answer: '## Answer\n\n````md\n```\nnested\n```\n````\n\n- done `x`\n\n',
        error: '',
      });

      await records.save(record);

      expect(await records.find('pr-review', 'event1')).toEqual(record);
    });

    it('replaces the record of an event saved again: a run goes from running to its outcome in one record', async () => {
      const records = await use();
      await records.save(aRunRecord(1, { outcome: 'running', answer: null }));
      await records.save(aRunRecord(1, { outcome: 'answered' }));
      await records.save(aRunRecord(1, { outcome: 'delivery_failed', error: 'delivery to octo/widgets#12 failed: gh is not logged in' }));

      expect(await records.list({ limit: 10 })).toEqual([
        aRunRecord(1, { outcome: 'delivery_failed', error: 'delivery to octo/widgets#12 failed: gh is not logged in' }),
      ]);
    });

    it('lists the newest first across routes, at most `limit`, or those of one route', async () => {
      const records = await use();
      await records.save(aRunRecord(2));
      await records.save(aRunRecord(4, { route: 'payments' }));
      await records.save(aRunRecord(1));
      await records.save(aRunRecord(3));

      expect((await records.list({ limit: 10 })).map((record) => record.eventId)).toEqual(['event4', 'event3', 'event2', 'event1']);
      expect((await records.list({ limit: 2 })).map((record) => record.eventId)).toEqual(['event4', 'event3']);
      expect((await records.list({ route: 'pr-review', limit: 2 })).map((record) => record.eventId)).toEqual(['event3', 'event2']);
      expect(await records.list({ route: 'nowhere', limit: 2 })).toEqual([]);
    });

    it('tells apart runs started within the same second, whatever their event ids', async () => {
      const records = await use();
      await records.save(aRunRecord(1, { eventId: 'zzz', startedAt: '2026-06-01T08:01:02.100Z' }));
      await records.save(aRunRecord(1, { eventId: 'aaa', startedAt: '2026-06-01T08:01:02.900Z' }));

      expect((await records.list({ limit: 1 })).map((record) => record.eventId)).toEqual(['aaa']);
      expect((await records.list({ route: 'pr-review', limit: 1 })).map((record) => record.eventId)).toEqual(['aaa']);
    });

    it('keeps the newest `keep` records of each route, and always the one just saved', async () => {
      const records = await use(2);
      for (const n of [1, 2, 3]) await records.save(aRunRecord(n));
      await records.save(aRunRecord(5, { route: 'payments' }));
      await records.save(aRunRecord(0));

      expect((await records.list({ route: 'pr-review', limit: 10 })).map((record) => record.eventId).sort()).toEqual(['event0', 'event3']);
      expect((await records.list({ route: 'payments', limit: 10 })).map((record) => record.eventId)).toEqual(['event5']);
    });

    it('keeps the records of runs under way, however many newer ones follow, and lets them go once they ended', async () => {
      const records = await use(2);
      await records.save(aRunRecord(1, { outcome: 'running', answer: null }));
      await records.save(aRunRecord(2, { outcome: 'answered' }));
      for (const n of [3, 4, 5, 6]) await records.save(aRunRecord(n));

      // A delivery reads its answer back from the record: both are still there.
      expect(await records.find('pr-review', 'event1')).toMatchObject({ outcome: 'running' });
      expect(await records.find('pr-review', 'event2')).toMatchObject({ outcome: 'answered', answer: 'Looks fine (2).' });

      await records.save(aRunRecord(1));
      await records.save(aRunRecord(2));
      for (const n of [7, 8, 9]) await records.save(aRunRecord(n));
      expect((await records.list({ route: 'pr-review', limit: 10 })).map((record) => record.eventId)).toEqual(['event9', 'event8']);
      expect(await records.find('pr-review', 'event1')).toBeNull();
    });
  });
}
