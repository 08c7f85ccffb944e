import type { RunRecord, RunRetention } from '../../src/domain/runs/RunRecord.js';
import type { RunLedger } from '../../src/application/ports/RunLedger.js';
import { aRun, type RunLedgerSubject } from './RunLedger.contract.js';

/** A webhook run `n` of route `route`, started n minutes after 2026-06-20 08:00 UTC. */
function aWebhookRun(n: number, route: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return aRun(n, {
    id: `event-${n}`,
    kind: 'webhook',
    subject: route,
    name: route,
    slot: null,
    event: 'pull_request',
    delivery_id: `delivery-${n}`,
    prompt: `Review PR ${n}`,
    answer: `Reviewed ${n}`,
    deliveries: [{ target: 'the log', outcome: 'delivered', message_ids: [], error: null }],
    ...overrides,
  });
}

/** Every page of `ledger.search`, following `next`, as the ids of each page. */
async function pages(ledger: RunLedger, search: Parameters<RunLedger['search']>[0]): Promise<string[][]> {
  const all: string[][] = [];
  let after = search.after ?? null;
  for (let page = 0; page < 100; page += 1) {
    const found = await ledger.search({ ...search, after });
    all.push(found.runs.map((run) => run.id));
    if (found.next === null) return all;
    after = found.next;
  }
  throw new Error('more than 100 pages');
}

/** What every RunLedger promises of `search` (the dashboard's run list). */
export function describeRunLedgerSearchContract(name: string, makeSubject: (retention: RunRetention) => Promise<RunLedgerSubject>): void {
  describe(`${name} (RunLedger search contract)`, () => {
    let subject: RunLedgerSubject | undefined;
    const use = async (retention: RunRetention = { count: 200, days: 30 }) => {
      subject = await makeSubject(retention);
      return subject.ledger;
    };

    afterEach(async () => {
      await subject?.cleanup?.();
      subject = undefined;
    });

    it('pages cron and webhook runs together, newest first, each run once, and says where the next page starts', async () => {
      const ledger = await use();
      for (let n = 0; n < 23; n += 1) await ledger.save(n % 3 === 0 ? aWebhookRun(n, 'github') : aRun(n, { subject: `job${n % 2}` }));

      const seen = await pages(ledger, { limit: 5 });

      expect(seen.map((page) => page.length)).toEqual([5, 5, 5, 5, 3]);
      const expected = Array.from({ length: 23 }, (_, n) => 22 - n).map((n) => (n % 3 === 0 ? `event-${n}` : `run-${n}`));
      expect(seen.flat()).toEqual(expected);
      const first = await ledger.search({ limit: 5 });
      expect(first.next).toEqual({ started_at: new Date(Date.UTC(2026, 5, 20, 8, 18)).toISOString(), id: 'event-18' });
      expect(await ledger.search({ limit: 23 })).toMatchObject({ next: null });
    });

    it('orders runs that started at the same instant by id, greatest first, and pages through them without a gap', async () => {
      const ledger = await use();
      const at = new Date(Date.UTC(2026, 5, 20, 9, 0)).toISOString();
      for (const id of ['b', 'a', 'B', 'c-1', 'c-10', 'c-2']) await ledger.save(aRun(1, { id, subject: `job-${id}`, started_at: at }));

      expect((await pages(ledger, { limit: 2 })).flat()).toEqual(['c-2', 'c-10', 'c-1', 'b', 'a', 'B']);
    });

    it('narrows by kind and job or route, by status and by a time range (from included, to not)', async () => {
      const ledger = await use();
      for (let n = 0; n < 10; n += 1)
        await ledger.save(aRun(n, { subject: n < 5 ? 'job1' : 'job2', status: n % 2 === 0 ? 'ok' : 'error' }));
      for (let n = 10; n < 14; n += 1) await ledger.save(aWebhookRun(n, n < 12 ? 'github' : 'gitlab'));
      const ids = async (search: Omit<Parameters<RunLedger['search']>[0], 'limit'>) =>
        (await ledger.search({ ...search, limit: 50 })).runs.map((run) => run.id);

      expect(await ids({ kind: 'cron', subject: 'job2' })).toEqual(['run-9', 'run-8', 'run-7', 'run-6', 'run-5']);
      expect(await ids({ kind: 'webhook', subject: 'github' })).toEqual(['event-11', 'event-10']);
      expect(await ids({ kind: 'webhook' })).toEqual(['event-13', 'event-12', 'event-11', 'event-10']);
      expect(await ids({ kind: 'cron', subject: 'job1', status: 'error' })).toEqual(['run-3', 'run-1']);
      expect(await ids({ status: 'running' })).toEqual([]);
      expect(await ids({ from: new Date(Date.UTC(2026, 5, 20, 8, 3)), to: new Date(Date.UTC(2026, 5, 20, 8, 6)) })).toEqual([
        'run-5',
        'run-4',
        'run-3',
      ]);
      expect(await ids({ kind: 'cron', subject: 'no-such-job' })).toEqual([]);
    });

    it('finds a text in the id, prompt, answer, error or delivery id, whatever its case, and a % or _ only as itself', async () => {
      const ledger = await use();
      await ledger.save(aRun(1, { prompt: 'Check the Disk usage' }));
      await ledger.save(aRun(2, { answer: 'All 100% fine', status: 'ok' }));
      await ledger.save(aRun(3, { status: 'error', answer: null, error: 'provider refused: quota_exceeded' }));
      await ledger.save(aWebhookRun(4, 'github', { delivery_id: 'abc-DEF-42' }));
      await ledger.save(aRun(5, { id: 'special-run-id' }));
      const ids = async (text: string) => (await ledger.search({ text, limit: 50 })).runs.map((run) => run.id);

      expect(await ids('disk USAGE')).toEqual(['run-1']);
      expect(await ids('100%')).toEqual(['run-2']);
      expect(await ids('%')).toEqual(['run-2']);
      expect(await ids('quota_exc')).toEqual(['run-3']);
      expect(await ids('_')).toEqual(['event-4', 'run-3']);
      expect(await ids('def-42')).toEqual(['event-4']);
      expect(await ids('SPECIAL-run')).toEqual(['special-run-id']);
      // Letters beyond ASCII match as they are written (PostgreSQL folds their case only in some locales).
      expect(await ids('ünïcode')).toEqual(['special-run-id', 'run-1']);
      expect(await ids('nothing like it')).toEqual([]);
      expect(await ids('   ')).toHaveLength(5);
    });

    it('pages a filtered search too, and lists only what the retention keeps', async () => {
      const ledger = await use({ count: 8, days: 30 });
      for (let n = 0; n < 12; n += 1) await ledger.save(aRun(n, { status: n % 2 === 0 ? 'ok' : 'error' }));

      const seen = await pages(ledger, { kind: 'cron', subject: 'job1', status: 'ok', limit: 3 });

      expect(seen).toEqual([['run-10', 'run-8', 'run-6'], ['run-4']]);
    });

    it('goes on after the last run of a page even when newer runs were saved meanwhile', async () => {
      const ledger = await use();
      for (let n = 0; n < 6; n += 1) await ledger.save(aRun(n));
      const first = await ledger.search({ limit: 3 });
      await ledger.save(aRun(30));

      const second = await ledger.search({ limit: 3, after: first.next });

      expect(first.runs.map((run) => run.id)).toEqual(['run-5', 'run-4', 'run-3']);
      expect(second.runs.map((run) => run.id)).toEqual(['run-2', 'run-1', 'run-0']);
      expect(second.next).toBeNull();
    });
  });
}
