import { DailyBudgets } from '../../../src/application/runs/DailyBudgets.js';
import type { RunRecord } from '../../../src/domain/runs/RunRecord.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { InMemoryRunLedger } from '../../support/fakes/InMemoryRunLedger.js';

const NOW = new Date('2026-06-20T12:00:00.000Z');

function run(id: string, subject: string, hoursAgo: number, cost: number | null, overrides: Partial<RunRecord> = {}): RunRecord {
  const started = new Date(NOW.getTime() - hoursAgo * 3_600_000).toISOString();
  return {
    id,
    kind: 'cron',
    subject,
    name: subject,
    slot: null,
    event: null,
    delivery_id: null,
    started_at: started,
    finished_at: started,
    status: 'ok',
    model: 'openai (gpt-4o)',
    prompt: 'p',
    answer: 'a',
    error: null,
    deliveries: [],
    usage: { input_tokens: 100, output_tokens: 10, cached_input_tokens: 0, model_turns: 1, tool_calls: 0 },
    cost_usd: cost,
    ...overrides,
  };
}

async function budgets(...runs: RunRecord[]) {
  const ledger = new InMemoryRunLedger(undefined, () => NOW);
  for (const each of runs) await ledger.save(each);
  return new DailyBudgets(ledger, new ManualClock(NOW));
}

describe('DailyBudgets', () => {
  const job = { kind: 'cron' as const, subject: 'job1' };

  it("holds a job's runs of the last 24 h against its own cap, in the words of the ledger", async () => {
    const daily = await budgets(run('a', 'job1', 1, 0.5), run('b', 'job1', 23, 0.25), run('c', 'job1', 25, 5), run('d', 'job2', 1, 5));

    expect(await daily.problemFor(job, 1, null)).toBeNull();
    expect(await daily.problemFor(job, 0.75, null)).toBe('daily budget reached ($0.75 of $0.75 in the last 24 h for this job)');
  });

  it('holds every run against the overall cap, and nothing without a cap', async () => {
    const daily = await budgets(run('a', 'job1', 1, 0.5), run('d', 'job2', 1, 2), run('e', 'job3', 2, null));

    expect(await daily.problemFor(job, null, 2.5)).toBe('daily budget reached ($2.50 of $2.50 in the last 24 h for all runs)');
    expect(await daily.problemFor(job, null, null)).toBeNull();
  });

  it('knows whether a run was kept from starting by a cap in the last 24 h', async () => {
    const blocked = { status: 'blocked_config' as const, error: 'daily budget reached ($1.00 of $1.00 in the last 24 h for this job)' };
    expect(await (await budgets(run('a', 'job1', 2, null, blocked))).blockedEarlierToday(job)).toBe(true);
    expect(await (await budgets(run('a', 'job1', 25, null, blocked))).blockedEarlierToday(job)).toBe(false);
    expect(await (await budgets(run('a', 'job1', 2, 0.1))).blockedEarlierToday(job)).toBe(false);
  });
});
