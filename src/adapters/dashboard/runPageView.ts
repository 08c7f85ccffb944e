import type { RunRecord } from '../../domain/runs/RunRecord.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';
import { html, type Html } from './html.js';
import { transcriptTimeline } from './transcriptView.js';
import { usageDetails } from './usageViews.js';
import { layout, table, when, type PageContext } from './views.js';

/** One run of the ledger: its record, its transcript as a timeline, and its deliveries. */
export function runPage(context: PageContext, run: RunRecord, transcript: RunTranscript | null = null): Html {
  const took = run.finished_at ? `${((Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000).toFixed(1)} s` : 'still running';
  return layout(
    context,
    `Run ${run.id}`,
    html`<dl>
<dt>Kind</dt><dd>${run.kind}</dd>
<dt>${run.kind === 'cron' ? 'Job' : 'Route'}</dt><dd>${run.kind === 'cron' ? html`<a href="/jobs/${encodeURIComponent(run.subject)}">${run.name}</a>` : run.name}</dd>
${run.slot ? html`<dt>Slot</dt><dd>${when(run.slot, context.timeZone)}</dd>` : null}
${run.event ? html`<dt>Event</dt><dd>${run.event}</dd><dt>Delivery id</dt><dd>${run.delivery_id}</dd>` : null}
<dt>Status</dt><dd>${run.status}</dd>
<dt>Started</dt><dd>${when(run.started_at, context.timeZone)}</dd>
<dt>Finished</dt><dd>${when(run.finished_at, context.timeZone)}</dd>
<dt>Took</dt><dd>${took}</dd>
${run.redelivered_at ? html`<dt>Delivered again</dt><dd>${when(run.redelivered_at, context.timeZone)}</dd>` : null}
<dt>Model</dt><dd>${run.model ?? '-'}</dd>
${usageDetails(run)}
</dl>
<h2>Prompt</h2>${run.prompt !== null ? html`<pre>${run.prompt}</pre>` : html`<p class="muted">None.</p>`}
${transcriptTimeline(transcript, context.timeZone)}
<h2>Answer</h2>${run.answer !== null ? html`<pre>${run.answer}</pre>` : html`<p class="muted">None.</p>`}
<h2>Error</h2>${run.error !== null ? html`<pre>${run.error}</pre>` : html`<p class="muted">None.</p>`}
<h2>Delivery</h2>
${table(
  'Delivery per target',
  ['Target', 'Outcome', 'Message ids', 'Error'],
  run.deliveries.map(
    (each) =>
      html`<tr><td>${each.target}</td><td>${each.outcome}</td><td>${each.message_ids.join(', ') || '-'}</td><td>${each.error ?? '-'}</td></tr>`,
  ),
  'Nothing was delivered.',
)}`,
  );
}
