/**
 * One run of the ledger (docs/dashboard.md, Runs): its record, its transcript as a timeline with
 * its deliveries, and what can be done with it (cancel, retry, redeliver), each asked for on a
 * page of its own first. While it runs, the page follows it live (data-live).
 */
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';
import { html, type Html } from './html.js';
import { statusBadge, tookOf } from './runsListView.js';
import { transcriptTimeline } from './transcriptView.js';
import { usageDetails } from './usageViews.js';
import { layout, postButton, table, when, type PageContext } from './views.js';

/** What can be done with a run from its page. */
export type RunAction = 'cancel' | 'retry' | 'redeliver';

/** The actions a run offers now: cancel while a cron run runs, retry a cron run that ended, redeliver an answer that was recorded. */
export function actionsOf(run: RunRecord): RunAction[] {
  const actions: RunAction[] = [];
  const running = run.status === 'running';
  if (run.kind === 'cron' && running && run.delivery_pending !== true) actions.push('cancel');
  if (run.kind === 'cron' && !running) actions.push('retry');
  if (!running && run.status !== 'skipped' && run.answer !== null && run.answer.trim() !== '') actions.push('redeliver');
  return actions;
}

const ACTION_LABELS: Record<RunAction, string> = { cancel: 'Cancel run', retry: 'Retry', redeliver: 'Redeliver' };

/** What each action does, said on its confirm page. */
function actionSentence(action: RunAction, run: RunRecord): string {
  if (action === 'cancel')
    return `The run of job ${run.name} is stopped wherever it runs; its record then says "cancelled by dashboard". Nothing is delivered.`;
  if (action === 'retry')
    return `Job ${run.name} runs again now, as "Run now" does; the new run's record says it was asked for by the dashboard, as a rerun of this one.`;
  return `The recorded answer of this run is sent again to ${run.kind === 'cron' ? "the job's targets it did not reach (all of them again when it reached every one)" : 'where the run delivered it'}, without running anything; the run's record says when, and that the dashboard asked.`;
}

function field(label: string, value: Html | string | null): Html {
  return html`<dt>${label}</dt><dd>${value ?? '-'}</dd>`;
}

/** The part of a run's page that changes while it runs: its fields, actions, transcript, answer and deliveries. */
export function runLive(context: PageContext, run: RunRecord, transcript: RunTranscript | null): Html {
  const subject = run.kind === 'cron' ? html`<a href="/jobs/${encodeURIComponent(run.subject)}">${run.name}</a>` : html`${run.name}`;
  const actions = actionsOf(run);
  const id = encodeURIComponent(run.id);
  return html`<dl>
${field('Status', statusBadge(run.status))}
${field('Kind', run.kind)}
${field(run.kind === 'cron' ? 'Job' : 'Route', subject)}
${run.slot ? field('Slot', when(run.slot, context.timeZone)) : null}
${run.event ? html`${field('Event', run.event)}${field('Delivery id', run.delivery_id)}` : null}
${field('Started', when(run.started_at, context.timeZone))}
${field('Finished', when(run.finished_at, context.timeZone))}
${field('Took', tookOf(run))}
${run.requested_by ? field('Asked for by', run.requested_by) : null}
${run.rerun_of ? field('Runs again', html`<a href="/runs/${encodeURIComponent(run.rerun_of)}">run ${run.rerun_of}</a>`) : null}
${run.attempt ? field('Attempt', String(run.attempt)) : null}
${run.redelivered_at ? field('Delivered again', `${when(run.redelivered_at, context.timeZone)}${run.redelivered_by ? ` (by ${run.redelivered_by})` : ''}`) : null}
${field('Model', run.model)}
${usageDetails(run)}
</dl>
<section aria-label="Actions" class="actions">
${actions.map((action) => html`<form class="inline" method="get" action="/runs/${id}/${action}"><button type="submit">${ACTION_LABELS[action]}</button></form>`)}
${run.kind === 'webhook' && run.status !== 'running' ? html`<p class="muted">A webhook run is not run again from here: its sender may send the event again.</p>` : null}
</section>
<h2>Prompt</h2>${run.prompt !== null ? html`<pre>${run.prompt}</pre>` : html`<p class="muted">None.</p>`}
${transcriptTimeline(transcript, context.timeZone, run)}
<h2>Answer</h2>${run.answer !== null ? html`<pre>${run.answer}</pre>` : html`<p class="muted">${run.status === 'running' ? 'Not yet.' : 'None.'}</p>`}
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
)}`;
}

/** One run of the ledger: the live part, refreshed as the run changes. */
export function runPage(context: PageContext, run: RunRecord, transcript: RunTranscript | null = null, madeAt: Date = new Date()): Html {
  const id = encodeURIComponent(run.id);
  return layout(
    context,
    `Run ${run.id}`,
    html`<p><a href="/runs">All runs</a></p>
<div data-live="/fragments/runs/${id}" data-live-on="run:${run.id}" data-live-run="${run.id}" data-live-since="${madeAt.getTime()}">${runLive(context, run, transcript)}</div>`,
  );
}

/** The page that asks to confirm an action on a run, or says why it cannot be done now. */
export function runActionPage(context: PageContext, run: RunRecord, action: RunAction): Html {
  const id = encodeURIComponent(run.id);
  const back = html`<a href="/runs/${id}">Back to the run</a>`;
  if (!actionsOf(run).includes(action)) {
    return layout(
      context,
      `${ACTION_LABELS[action]}: run ${run.id}`,
      html`<p class="problem" role="alert">${notNowSentence(action, run)}</p><p>${back}</p>`,
    );
  }
  const question = action === 'cancel' ? 'Cancel this run?' : action === 'retry' ? 'Run this job again now?' : 'Deliver this answer again?';
  return layout(
    context,
    `${question} Run ${run.id}`,
    html`<p>${actionSentence(action, run)}</p>
${postButton(context, `/runs/${id}/${action}`, `Yes, ${ACTION_LABELS[action].toLowerCase()}`, html`<input type="hidden" name="confirm" value="yes">`)}
${back}`,
  );
}

/** Why `action` cannot be done to `run` now. */
export function notNowSentence(action: RunAction, run: RunRecord): string {
  if (action === 'cancel')
    return run.kind === 'webhook'
      ? `Run ${run.id} is a webhook run, which cannot be cancelled from the dashboard.`
      : `Run ${run.id} is not running any more (it is ${run.status}), so there is nothing to cancel.`;
  if (action === 'retry')
    return run.kind === 'webhook'
      ? `Run ${run.id} is a webhook run: it runs again only when its sender sends the event again.`
      : `Run ${run.id} is still running; retry it once it has ended.`;
  return run.status === 'running'
    ? `Run ${run.id} is still running; its answer can be delivered again once it has ended.`
    : `Run ${run.id} has no answer to deliver again (it is ${run.status}).`;
}
