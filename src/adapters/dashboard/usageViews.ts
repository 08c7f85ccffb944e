/** What runs spent, as the dashboard's run and job pages show it (docs/runs.md, Usage and cost). */
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import { costInWords, tokensInWords, totalsInWords, type RunTotals } from '../../domain/runs/runTotals.js';
import { formatCount } from '../../domain/runs/usage.js';
import { html, type Html } from './html.js';

/** A run's tokens, model turns, tool calls and cost, as entries of its page's list. */
export function usageDetails(run: RunRecord): Html {
  const usage = run.usage;
  const cost = usage && run.cost_usd == null ? 'no price in models.prices' : costInWords(run.cost_usd);
  if (!usage) return html`<dt>Tokens</dt><dd>-</dd><dt>Cost</dt><dd>${cost}</dd>`;
  return html`<dt>Tokens</dt><dd>${tokensInWords(usage)} (${formatCount(usage.cached_input_tokens)} cached input)</dd>
<dt>Model turns</dt><dd>${formatCount(usage.model_turns)}</dd><dt>Tool calls</dt><dd>${formatCount(usage.tool_calls)}</dd>
<dt>Cost</dt><dd>${cost}</dd>`;
}

/** What a job's runs spent in the last 24 hours and 30 days, as fields of its page; none when not known. */
export function spentFields(spent: { day: RunTotals; month: RunTotals } | undefined): Array<[string, string]> {
  return spent
    ? [
        ['Spent, last 24 h', totalsInWords(spent.day)],
        ['Spent, last 30 days', totalsInWords(spent.month)],
      ]
    : [];
}
