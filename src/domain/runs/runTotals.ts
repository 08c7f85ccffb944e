/** What runs spent together: `agent cron show`'s totals, and what a daily cap is held against (docs/runs.md). */
import { addUsage, emptyUsage, formatCount, formatUsd, roundCost, type RunUsage } from './usage.js';
import type { JobBudget } from '../Job.js';
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

/** `1,200 in / 80 out` (input counts cached input too); `-` when nothing was counted. */
export function tokensInWords(usage: RunUsage | null | undefined): string {
  return usage ? `${formatCount(usage.input_tokens)} in / ${formatCount(usage.output_tokens)} out` : '-';
}

/** `$0.0042`; `-` when there is no cost (a model without a price, nothing counted). */
export function costInWords(cost: number | null | undefined): string {
  return cost == null ? '-' : formatUsd(cost);
}

/** A period's totals in words: `3 runs, 3,600 in / 240 out tokens (1,200 cached), $0.0108`. */
export function totalsInWords(totals: RunTotals): string {
  const runs = `${totals.runs} run${totals.runs === 1 ? '' : 's'}`;
  if (totals.runs === 0) return 'no runs';
  if (totals.usage.model_turns === 0 && totals.cost_usd === 0) return `${runs}, no usage reported`;
  const cached = totals.usage.cached_input_tokens > 0 ? ` (${formatCount(totals.usage.cached_input_tokens)} cached)` : '';
  const unpriced = totals.unpriced_runs > 0 ? ` (${totals.unpriced_runs} without a price in models.prices)` : '';
  return `${runs}, ${tokensInWords(totals.usage)} tokens${cached}, ${formatUsd(totals.cost_usd)}${unpriced}`;
}

/** A job's own limits in words (`3 model turns, $0.50 a run; $2.00 a day`); `none of its own (agent.budget applies)` without any. */
export function budgetInWords(budget: JobBudget | null | undefined): string {
  if (!budget) return 'none of its own (agent.budget applies)';
  const limits = [
    ...(budget.max_turns != null ? [`${formatCount(budget.max_turns)} model turns`] : []),
    ...(budget.max_tokens != null ? [`${formatCount(budget.max_tokens)} tokens`] : []),
    ...(budget.max_cost != null ? [formatUsd(budget.max_cost)] : []),
  ];
  return [
    ...(limits.length > 0 ? [`${limits.join(', ')} a run`] : []),
    ...(budget.max_cost_per_day != null ? [`${formatUsd(budget.max_cost_per_day)} a day`] : []),
  ].join('; ');
}
