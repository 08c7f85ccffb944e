/**
 * The overview's charts: a figure with its caption, a legend in text, the place uPlot draws in
 * (pageScripts.ts CHARTS_JS, with the data in `data-chart`) and the same numbers in a table for
 * whoever does not see the picture. Without the script the legend and the table remain.
 */
import type { CostPerDay, RunHistogram } from '../../domain/runs/runStatistics.js';
import { RUN_STATUSES } from '../../domain/runs/runStatistics.js';
import { formatUsd } from '../../domain/runs/usage.js';
import { html, type Html } from './html.js';
import { table } from './pageShell.js';

/** One stacked layer of a chart: its label, the status class its colour is taken from, a value per bar. */
interface ChartSeries {
  label: string;
  tone: string;
  values: number[];
}

/** The colours of the cost chart's models, in turn: the status classes' chart colours. */
const MODEL_TONES = [
  'status-running',
  'status-ok',
  'status-blocked_config',
  'status-delivery_queued',
  'status-delivery_failed',
  'status-error',
];

function chartFigure(
  id: string,
  caption: string,
  labels: readonly string[],
  series: readonly ChartSeries[],
  unit: 'runs' | 'usd',
  numbers: Html,
): Html {
  // A date's axis label is its month and day (`06-20`): ten of them fit a phone's width.
  const data = JSON.stringify({ labels: labels.map((label) => (/^\d{4}-/.test(label) ? label.slice(5) : label)), unit, series });
  const total = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0);
  const amount = (value: number) => (unit === 'usd' ? formatUsd(value) : String(value));
  return html`<figure class="chart" aria-labelledby="${id}-caption">
<figcaption id="${id}-caption">${caption}</figcaption>
${
  series.length > 0
    ? html`<ul class="legend">${series.map((each) => html`<li><span class="swatch ${each.tone}"></span>${each.label}: ${amount(total(each.values))}</li>`)}</ul>`
    : html`<p class="muted">None in this period.</p>`
}
<div class="chart-canvas" id="${id}" data-chart="${data}" aria-hidden="true"></div>
<details class="data"><summary>The numbers</summary>${numbers}</details>
</figure>`;
}

/** Runs per bucket, stacked by status: only the statuses some bucket has. */
export function runsChart(id: string, caption: string, histogram: RunHistogram, bucket: string): Html {
  const statuses = RUN_STATUSES.filter((status) => histogram.counts[status].some((count) => count > 0));
  const series = statuses.map((status) => ({ label: status, tone: `status-${status}`, values: histogram.counts[status] }));
  const rows = histogram.labels.map(
    (label, index) =>
      html`<tr><th scope="row">${label}</th>${statuses.map((status) => html`<td class="number">${histogram.counts[status][index]}</td>`)}</tr>`,
  );
  const numbers =
    statuses.length === 0
      ? html`<p class="muted">No runs.</p>`
      : table(caption, [bucket, ...statuses.map((status) => ({ text: status, number: true as const }))], rows, 'No runs.');
  return chartFigure(id, caption, histogram.labels, series, 'runs', numbers);
}

/** What runs cost per day, stacked by model; a sentence instead when no run had a cost. */
export function costChart(id: string, caption: string, cost: CostPerDay): Html {
  if (cost.models.length === 0) {
    return html`<p class="muted">No run of the last 30 days has a cost: a run has one once its model has a price in models.prices (see the docs on usage and cost).</p>`;
  }
  const series = cost.models.map((model, index) => ({
    label: model.model,
    tone: MODEL_TONES[index % MODEL_TONES.length]!,
    values: model.costs,
  }));
  const rows = cost.days
    .map((day, index) => ({ day, index }))
    .filter(({ index }) => cost.models.some((model) => model.costs[index]! > 0))
    .map(
      ({ day, index }) =>
        html`<tr><th scope="row">${day}</th>${cost.models.map((model) => html`<td class="number">${formatUsd(model.costs[index]!)}</td>`)}</tr>`,
    );
  const numbers = table(caption, ['Day', ...cost.models.map((model) => ({ text: model.model, number: true as const }))], rows, 'No cost.');
  return chartFigure(id, caption, cost.days, series, 'usd', numbers);
}
