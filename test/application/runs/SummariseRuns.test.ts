import 'reflect-metadata';
import { SummariseRuns } from '../../../src/application/runs/SummariseRuns.js';
import type { RunRecord, RunStatus } from '../../../src/domain/runs/RunRecord.js';
import { InMemoryRunLedger } from '../../support/fakes/InMemoryRunLedger.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';

function run(id: string, kind: RunRecord['kind'], started: Date, status: RunStatus, tookMs: number, cost: number | null): RunRecord {
  return {
    id,
    kind,
    subject: kind === 'cron' ? 'job1' : 'github',
    name: kind === 'cron' ? 'Digest' : 'github',
    slot: null,
    event: kind === 'webhook' ? 'pull_request' : null,
    delivery_id: kind === 'webhook' ? `d-${id}` : null,
    started_at: started.toISOString(),
    finished_at: new Date(started.getTime() + tookMs).toISOString(),
    status,
    model: 'anthropic/claude-sonnet',
    prompt: 'p',
    answer: 'a',
    error: null,
    deliveries: [],
    cost_usd: cost,
  };
}

describe('SummariseRuns', () => {
  it('reads the ledger once for the callers of the same two seconds, and anew after', async () => {
    const clock = new ManualClock('2026-06-20T10:30:00.000Z');
    const ledger = new InMemoryRunLedger(undefined, () => clock.now());
    let reads = 0;
    const list = ledger.list.bind(ledger);
    ledger.list = (query) => {
      reads += 1;
      return list(query);
    };
    const summaries = new SummariseRuns(ledger, clock);

    await Promise.all([summaries.execute({ timeZone: 'UTC' }), summaries.execute({ timeZone: 'UTC' })]);
    clock.advance(1999);
    await summaries.execute({ timeZone: 'UTC' });
    expect(reads).toBe(1);
    await ledger.save(run('c1', 'cron', clock.now(), 'ok', 0, null));
    clock.advance(1);
    const summary = await summaries.execute({ timeZone: 'UTC' });
    expect(reads).toBe(2);
    expect(summary.last24h.ok).toBe(1);
  });

  it("summarises cron and webhook runs of the ledger at the clock's time: per hour, per day, by status, cost and durations", async () => {
    const clock = new ManualClock('2026-06-20T10:30:00.000Z');
    const ledger = new InMemoryRunLedger(undefined, () => clock.now());
    const at = (hoursAgo: number) => new Date(clock.now().getTime() - hoursAgo * 3_600_000);
    await ledger.save(run('c1', 'cron', at(0.1), 'ok', 2000, 0.5));
    await ledger.save(run('c2', 'cron', at(5), 'error', 4000, null));
    await ledger.save(run('w1', 'webhook', at(1), 'ok', 10_000, 0.25));
    await ledger.save(run('w2', 'webhook', at(48), 'delivery_failed', 8000, 0.25));
    const summary = await new SummariseRuns(ledger, clock).execute({ timeZone: 'UTC' });

    expect(summary.at).toBe('2026-06-20T10:30:00.000Z');
    expect(summary.perHour.counts.ok[23]).toBe(1);
    expect(summary.perHour.counts.ok[22]).toBe(1);
    expect(summary.perHour.counts.error[18]).toBe(1);
    expect(summary.perDay.counts.ok[29]).toBe(2);
    expect(summary.perDay.counts.delivery_failed[27]).toBe(1);
    expect(summary.last24h).toMatchObject({ ok: 2, error: 1, delivery_failed: 0 });
    expect(summary.cost.models).toEqual([{ model: 'anthropic/claude-sonnet', costs: expect.any(Array), total: 1 }]);
    expect(summary.durations.map((each) => [each.name, each.p50_ms, each.p95_ms])).toEqual([
      ['github', 8000, 10_000],
      ['Digest', 2000, 4000],
    ]);

    clock.advance(86_400_000);
    expect((await new SummariseRuns(ledger, clock).execute({ timeZone: 'UTC' })).last24h.ok).toBe(0);
  });
});
