/** The run list (docs/dashboard.md, Runs): cron and webhook runs together, filtered and paged. */
import type { Job } from '../../domain/Job.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import { RUN_STATUSES, type RunPosition } from '../../domain/runs/runSearch.js';
import { tokensInWords } from '../../domain/runs/runTotals.js';
import { html, type Html } from './html.js';
import { statusBadge } from './pageShell.js';
import { cursorOf, filterQuery, RUNS_PER_PAGE, type RunFilterValues } from './runFilters.js';
import { layout, table, when, type PageContext } from './views.js';

export { statusBadge } from './pageShell.js';

/** How long a run took, or that it still runs. */
export function tookOf(run: RunRecord): string {
  if (run.finished_at === null) return 'still running';
  return `${(Math.max(0, Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000).toFixed(1)} s`;
}

function firstLine(text: string | null): string {
  const line =
    text
      ?.split('\n')
      .find((each) => each.trim() !== '')
      ?.trim() ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

export interface RunListView {
  values: RunFilterValues;
  runs: RunRecord[];
  next: RunPosition | null;
  jobs: Pick<Job, 'id' | 'name'>[];
  routes: string[];
}

/** The table of a page of runs and the link to the next page: the part of the page the live updates replace. */
export function runListPart(view: RunListView, timeZone: string): Html {
  const nextLink =
    view.next === null
      ? html`<p class="muted">No older runs match.</p>`
      : html`<p><a rel="next" href="/runs?${filterQuery(view.values, { cursor: cursorOf(view.next) })}">Next page</a><span class="muted"> (older runs)</span></p>`;
  return html`${table(
    view.values.cursor === '' ? 'Runs, newest first' : 'Runs, newest first (an older page)',
    ['Started', 'Kind', 'Job or route', 'Status', 'Took', 'Tokens', 'Answer or error', 'Run'],
    view.runs.map(
      (run) =>
        html`<tr><td>${when(run.started_at, timeZone)}</td><td>${run.kind}</td><td>${run.kind === 'cron' ? html`<a href="/jobs/${encodeURIComponent(run.subject)}">${run.name}</a>` : run.name}</td><td>${statusBadge(run.status)}</td><td>${tookOf(run)}</td><td>${tokensInWords(run.usage)}</td><td>${firstLine(run.error) || firstLine(run.answer) || '-'}</td><td><a href="/runs/${encodeURIComponent(run.id)}">Details<span class="muted"> of run ${run.id}</span></a></td></tr>`,
    ),
    'No run matches.',
  )}${nextLink}`;
}

function option(value: string, label: string, chosen: string): Html {
  return html`<option value="${value}"${value === chosen ? html` selected` : null}>${label}</option>`;
}

/** The run list's page: the filters, the table (updated live) and the paging links. */
export function runListPage(context: PageContext, view: RunListView, madeAt: Date = new Date()): Html {
  const { values } = view;
  const query = filterQuery(values, values.cursor === '' ? {} : { cursor: values.cursor });
  return layout(
    context,
    'Runs',
    html`<form class="filters" method="get" action="/runs" role="search" aria-label="Filter runs">
<label>Job<select name="job">${option('', 'any', values.job)}${view.jobs.map((job) => option(job.id, job.name, values.job))}</select></label>
<label>Route<select name="route">${option('', 'any', values.route)}${view.routes.map((route) => option(route, route, values.route))}</select></label>
<label>Kind<select name="kind">${option('', 'any', values.kind)}${option('cron', 'cron', values.kind)}${option('webhook', 'webhook', values.kind)}</select></label>
<label>Status<select name="status">${option('', 'any', values.status)}${RUN_STATUSES.map((status) => option(status, status, values.status))}</select></label>
<label>From<input name="from" type="datetime-local" step="1" value="${values.from}"></label>
<label>To<input name="to" type="datetime-local" step="1" value="${values.to}"></label>
<label>Search<input name="q" type="search" value="${values.q}" placeholder="prompt, answer, error or id"></label>
<button type="submit">Filter</button>
</form>
<p class="muted">Times in ${context.timeZone}; ${RUNS_PER_PAGE} runs a page. ${values.cursor !== '' ? html`<a href="/runs?${filterQuery(values)}">Newest runs</a>` : null}</p>
<div data-live="/fragments/runs-list?${query}" data-live-on="runs" data-live-since="${madeAt.getTime()}">${runListPart(view, context.timeZone)}</div>`,
  );
}
