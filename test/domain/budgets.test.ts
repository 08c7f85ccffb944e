import { readConfiguredRoutes } from '../../src/adapters/config/webhookRouteConfig.js';
import { editJob } from '../../src/domain/Job.js';
import { readJobRecord, storedRecordOf } from '../../src/domain/JobRecord.js';
import { budgetReached, costOf, formatUsd, mergeBudgets, UsageTally } from '../../src/domain/runs/usage.js';
import { anHourlyJob } from '../support/jobs.js';

const NOW = new Date('2026-06-20T12:00:00Z');

describe('a run’s usage', () => {
  it('is summed per model, and costs nothing it cannot price', () => {
    const tally = new UsageTally();
    tally.addTurn('openai', 'gpt-4o', { input_tokens: 1000, output_tokens: 100, cached_input_tokens: 500 });
    tally.addTurn('backup', 'small', { input_tokens: 200, output_tokens: 10, cached_input_tokens: 0 });
    tally.addTurn('openai', 'gpt-4o', null);
    tally.addToolCalls(2);

    expect(tally.total()).toEqual({ input_tokens: 1200, output_tokens: 110, cached_input_tokens: 500, model_turns: 3, tool_calls: 2 });
    const priced = { input_per_mtok: 2, output_per_mtok: 10 };
    expect(costOf(tally.byModel(), () => priced)).toBeCloseTo((1200 * 2 + 110 * 10) / 1e6, 9);
    expect(costOf(tally.byModel(), (provider) => (provider === 'openai' ? priced : null))).toBeNull();
  });

  it('reaches a budget in the ledger’s words, the first limit reached', () => {
    const usage = { input_tokens: 40_000, output_tokens: 1_200, cached_input_tokens: 0, model_turns: 4, tool_calls: 3 };
    expect(budgetReached({ max_tokens: 40_000 }, usage, null)).toBe('budget reached: 41,200 tokens of 40,000');
    expect(budgetReached({ max_turns: 3, max_tokens: 40_000 }, usage, null)).toBe('budget reached: 4 model turns of 3');
    expect(budgetReached({ max_cost: 0.5 }, usage, 0.52)).toBe('budget reached: $0.52 of $0.50');
    expect(budgetReached({ max_cost: 0.5 }, usage, null)).toBeNull();
    expect(budgetReached({ max_turns: 5, max_tokens: 50_000, max_cost: 1 }, usage, 0.5)).toBeNull();
  });

  it('takes each limit from the first budget that sets it', () => {
    expect(mergeBudgets({ max_turns: 3 }, { max_turns: 10, max_cost: 1 })).toEqual({ max_turns: 3, max_tokens: null, max_cost: 1 });
    expect(formatUsd(0.0042)).toBe('$0.0042');
  });
});

describe('a job’s budget', () => {
  it('is set, changed and removed limit by limit, and kept in its record', () => {
    const job = editJob(anHourlyJob('b1'), { budget: { max_turns: 3, max_cost_per_day: 2 } }, NOW, 'UTC');
    expect(job.budget).toEqual({ max_turns: 3, max_cost_per_day: 2 });

    const read = readJobRecord(storedRecordOf(job, undefined), 0);
    expect(read).toMatchObject({ ok: true, job: { budget: { max_turns: 3, max_cost_per_day: 2 } } });

    const lowered = editJob(job, { budget: { max_turns: null, max_cost: 0.5 } }, NOW, 'UTC');
    expect(lowered.budget).toEqual({ max_cost: 0.5, max_cost_per_day: 2 });
    const cleared = editJob(lowered, { budget: { max_cost: null, max_cost_per_day: null } }, NOW, 'UTC');
    expect(cleared.budget).toBeUndefined();
    expect(storedRecordOf(cleared, storedRecordOf(lowered, undefined)).budget).toBeUndefined();
  });
});

describe('a route’s budget', () => {
  it('is read from the route, and each wrong limit named in one sentence', () => {
    const { routes, problems } = readConfiguredRoutes(
      {
        secret: 's3cret',
        routes: {
          ok: { budget: { max_turns: 5, max_cost: 0.25, max_cost_per_day: 3 } },
          bad: { budget: { max_turns: 0, max_cost: 'cheap', turns: 3 } },
        },
      },
      true,
      'config.yaml',
    );

    expect(routes.find((route) => route.name === 'ok')?.budget).toEqual({ max_turns: 5, max_cost: 0.25, max_cost_per_day: 3 });
    expect(problems).toEqual([
      'config.yaml: platforms.webhook.extra.routes.bad.budget.max_turns must be a whole number of 1 or more (got 0).',
      'config.yaml: platforms.webhook.extra.routes.bad.budget.max_cost must be a positive amount of US dollars such as 0.5 (got "cheap").',
      'config.yaml: platforms.webhook.extra.routes.bad.budget.turns is not a budget limit; use max_turns, max_tokens, max_cost or max_cost_per_day.',
    ]);
  });
});
