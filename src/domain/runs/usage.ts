/*
 * What a run spent (docs/runs.md, Usage and cost): the tokens of each model turn as the provider
 * reported them, summed per run, priced with the configured prices, and held against a budget.
 *
 * `input_tokens` counts every token of the prompt, cached ones included; `cached_input_tokens` is
 * the part of them the provider read from its prompt cache. OpenAI reports it that way
 * (`prompt_tokens`, `prompt_tokens_details.cached_tokens`); Anthropic reports the three parts
 * apart (`input_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`), and all three
 * add up to `input_tokens` here, the cache reads being the cached ones.
 */

/** The tokens of one model turn. */
export interface TokenCounts {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
}

/** What one run spent, as the ledger keeps it. */
export interface RunUsage extends TokenCounts {
  /** Model calls that streamed to their end. */
  model_turns: number;
  /** Tool calls the model asked for (each one run or answered with an error). */
  tool_calls: number;
}

/** A run's tokens on one provider and model (a run that fell back uses more than one). */
export interface ModelUsage extends TokenCounts {
  provider: string;
  model: string;
  model_turns: number;
}

/** `models.prices.<provider>/<model>`: US dollars per million tokens. */
export interface ModelPrice {
  input_per_mtok: number;
  output_per_mtok: number;
  /** Cached input; absent: priced as other input. */
  cached_input_per_mtok?: number | null;
}

/** The price of `provider/model`, or null when none is configured. */
export type PriceLookup = (provider: string, model: string) => ModelPrice | null;

export const NO_PRICES: PriceLookup = () => null;

export function emptyUsage(): RunUsage {
  return { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, model_turns: 0, tool_calls: 0 };
}

/** A count as a provider sent it: a non-negative whole number, anything else 0. */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** The sum of two usages. */
export function addUsage(a: RunUsage, b: RunUsage): RunUsage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cached_input_tokens: a.cached_input_tokens + b.cached_input_tokens,
    model_turns: a.model_turns + b.model_turns,
    tool_calls: a.tool_calls + b.tool_calls,
  };
}

/** The tokens a budget counts: input (cached included) and output. */
export function totalTokens(usage: TokenCounts): number {
  return usage.input_tokens + usage.output_tokens;
}

/** What `counts` cost at `price`, in US dollars. */
export function priceOf(counts: TokenCounts, price: ModelPrice): number {
  const cached = Math.min(counts.cached_input_tokens, counts.input_tokens);
  const cachedPrice = price.cached_input_per_mtok ?? price.input_per_mtok;
  return (
    ((counts.input_tokens - cached) * price.input_per_mtok + cached * cachedPrice + counts.output_tokens * price.output_per_mtok) /
    1_000_000
  );
}

/**
 * What a run's tokens cost: the sum over its models, or null when a model that spent tokens has
 * no price (a part of the cost would look like all of it). A run that spent nothing costs 0 when
 * its models are priced, else null.
 */
export function costOf(byModel: readonly ModelUsage[], prices: PriceLookup): number | null {
  let cost = 0;
  for (const entry of byModel) {
    const price = prices(entry.provider, entry.model);
    if (price === null) return null;
    cost += priceOf(entry, price);
  }
  return byModel.length === 0 ? null : roundCost(cost);
}

/** Costs are kept to a millionth of a dollar: sums of many runs stay exact enough and short. */
export function roundCost(cost: number): number {
  return Math.round(cost * 1_000_000) / 1_000_000;
}

/** Sums one run's tokens, per provider and model. */
export class UsageTally {
  private readonly models = new Map<string, ModelUsage>();
  private toolCalls = 0;

  /** One model turn of `provider/model` that reported `counts` (null: it reported none). */
  addTurn(provider: string, model: string, counts: TokenCounts | null): void {
    const key = `${provider}\n${model}`;
    const entry = this.models.get(key) ?? { provider, model, input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, model_turns: 0 };
    entry.model_turns += 1;
    if (counts) {
      entry.input_tokens += counts.input_tokens;
      entry.output_tokens += counts.output_tokens;
      entry.cached_input_tokens += counts.cached_input_tokens;
    }
    this.models.set(key, entry);
  }

  addToolCalls(count: number): void {
    this.toolCalls += count;
  }

  byModel(): ModelUsage[] {
    return [...this.models.values()].map((entry) => ({ ...entry }));
  }

  total(): RunUsage {
    const total = emptyUsage();
    for (const entry of this.models.values()) {
      total.input_tokens += entry.input_tokens;
      total.output_tokens += entry.output_tokens;
      total.cached_input_tokens += entry.cached_input_tokens;
      total.model_turns += entry.model_turns;
    }
    total.tool_calls = this.toolCalls;
    return total;
  }
}

/** Limits of one run (`--max-turns`, `--max-tokens`, `--max-cost`, a route's `budget`, `agent.budget`); null: none. */
export interface RunBudget {
  max_turns?: number | null;
  max_tokens?: number | null;
  max_cost?: number | null;
}

/** Each limit from the first of `budgets` that sets it (the job's, then the configured default). */
export function mergeBudgets(...budgets: ReadonlyArray<RunBudget | null | undefined>): RunBudget {
  const pick = (key: keyof RunBudget) => budgets.find((budget) => budget?.[key] != null)?.[key] ?? null;
  return { max_turns: pick('max_turns'), max_tokens: pick('max_tokens'), max_cost: pick('max_cost') };
}

/**
 * Whether a run that spent `usage` (costing `cost`, null when unpriced) may start another model
 * turn under `budget`: null when it may, else the run's error, `budget reached: 41,200 tokens of
 * 40,000`, `budget reached: 3 model turns of 3`, `budget reached: $0.52 of $0.50`. A cost limit
 * holds only where the cost is known.
 */
export function budgetReached(budget: RunBudget, usage: RunUsage, cost: number | null): string | null {
  if (budget.max_turns != null && usage.model_turns >= budget.max_turns) {
    return `budget reached: ${formatCount(usage.model_turns)} model turns of ${formatCount(budget.max_turns)}`;
  }
  const tokens = totalTokens(usage);
  if (budget.max_tokens != null && tokens >= budget.max_tokens) {
    return `budget reached: ${formatCount(tokens)} tokens of ${formatCount(budget.max_tokens)}`;
  }
  if (budget.max_cost != null && cost !== null && cost >= budget.max_cost) {
    return `budget reached: ${formatUsd(cost)} of ${formatUsd(budget.max_cost)}`;
  }
  return null;
}

/** The error of a run not started past a daily cap: `daily budget reached ($1.02 of $1.00 in the last 24 h for this job)`. */
export function dailyBudgetMessage(spent: number, cap: number, scope: 'job' | 'all'): string {
  return `daily budget reached (${formatUsd(spent)} of ${formatUsd(cap)} in the last 24 h ${scope === 'job' ? 'for this job' : 'for all runs'})`;
}

/** Whether `error` is that of a run not started past a daily cap. */
export function isDailyBudgetError(error: string | null | undefined): boolean {
  return typeof error === 'string' && error.startsWith('daily budget reached (');
}

/** `41,200`. */
export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

/** `$0.52`, `$0.012`, `$0.0042`: at least two places, up to four where the amount has them. */
export function formatUsd(value: number): string {
  return `$${value.toFixed(4).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}
