/** What runs spent together: `agent cron show`'s totals, and what a daily cap is held against (docs/runs.md). */
import { addUsage, emptyUsage, roundCost, type RunUsage } from './usage.js';
import type { RunRecord } from './RunRecord.js';

export interface RunTotals {
  /** Runs that started in the period. */
  runs: number;
  /** Their usage, summed. */
  usage: RunUsage;
  /** Their cost in US dollars, summed over the runs with one. */
  cost_usd: number;
  /** Runs that spent tokens but have no cost (a model without a price): `cost_usd` leaves them out. */
  unpriced_runs: number;
}

export function emptyTotals(): RunTotals {
  return { runs: 0, usage: emptyUsage(), cost_usd: 0, unpriced_runs: 0 };
}

/** `totals` with `run` added. */
export function addRun(totals: RunTotals, run: Pick<RunRecord, 'usage' | 'cost_usd'>): RunTotals {
  const usage = isUsage(run.usage) ? run.usage : null;
  const cost = typeof run.cost_usd === 'number' && Number.isFinite(run.cost_usd) ? run.cost_usd : null;
  return {
    runs: totals.runs + 1,
    usage: usage ? addUsage(totals.usage, usage) : totals.usage,
    cost_usd: cost === null ? totals.cost_usd : roundCost(totals.cost_usd + cost),
    unpriced_runs: totals.unpriced_runs + (usage !== null && cost === null && usage.input_tokens + usage.output_tokens > 0 ? 1 : 0),
  };
}

/** The totals of `runs`. */
export function totalsOf(runs: ReadonlyArray<Pick<RunRecord, 'usage' | 'cost_usd'>>): RunTotals {
  return runs.reduce(addRun, emptyTotals());
}

function isUsage(value: unknown): value is RunUsage {
  if (typeof value !== 'object' || value === null) return false;
  const usage = value as Record<string, unknown>;
  return ['input_tokens', 'output_tokens', 'cached_input_tokens', 'model_turns', 'tool_calls'].every(
    (key) => typeof usage[key] === 'number' && Number.isFinite(usage[key]),
  );
}
