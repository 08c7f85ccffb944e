/**
 * The overview (docs/dashboard.md, Overview): the jobs by state and by last status and the runs of
 * the last 24 hours by status, each count a link to the list it counts; runs per hour and per day
 * stacked by status; cost per day per model; each job's p50 and p95 duration; the next runs; the
 * gateways with their roles; the jobs failing; the latest runs. The parts that change as jobs run
 * are marked `data-live`, each served alone under /fragments/overview/.
 */
import type { RunSummary } from '../../application/runs/SummariseRuns.js';
import type { HomeStatus } from '../../application/status/ShowStatus.js';
import type { GatewayRegistration } from '../../application/ports/GatewayRegistry.js';
import type { Replica } from '../../application/ports/ReplicaLeases.js';
import { JOB_STATES, type Job } from '../../domain/Job.js';
import { LAST_STATUSES } from '../../domain/RunOutcome.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import { countBy, durationInWords, RUN_STATUSES } from '../../domain/runs/runStatistics.js';
import { costChart, runsChart } from './chartViews.js';
import { html, type Html } from './html.js';
import { layout, statusBadge, table, when, type PageContext } from './pageShell.js';
import { firstLine, runsTable } from './views.js';

/** The style sheet and scripts the overview's charts need besides the dashboard's own. */
export const OVERVIEW_ASSETS = { styles: ['/assets/uplot.css'], scripts: ['/assets/uplot.js', '/assets/charts.js'] } as const;

/** What the live parts of the overview show. */
export interface OverviewNow {
  status: HomeStatus;
  jobs: readonly Job[];
  nextRuns: ReadonlyArray<{ job: Job; at: Date }>;
  /** The runs of the last 24 hours, by status. */
  last24h: RunSummary['last24h'];
}

function card(count: number, label: string, href: string, tone: string): Html {
  return html`<li class="card status-${tone}"><a href="${href}"><span class="count">${count}</span> <span class="label">${label}</span></a></li>`;
}

/** The counts, each a link to the list it counts. */
export function overviewCounts(view: OverviewNow): Html {
  const states = countBy(view.jobs, JOB_STATES, (job) => job.state);
  const statuses = countBy(view.jobs, [...LAST_STATUSES, 'never'] as const, (job) => job.last_status ?? 'never');
  return html`<h2 id="jobs-by-state">Jobs by state</h2>
<ul class="cards" aria-labelledby="jobs-by-state">${JOB_STATES.map((state) => card(states[state], state, `/jobs?state=${state}`, state))}</ul>
<h2 id="jobs-by-status">Jobs by last status</h2>
<ul class="cards" aria-labelledby="jobs-by-status">${[...LAST_STATUSES, 'never' as const].map((status) =>
    card(statuses[status], status === 'never' ? 'never ran' : status, `/jobs?status=${status}`, status === 'never' ? 'none' : status),
  )}</ul>
<h2 id="runs-by-status">Runs in the last 24 hours</h2>
<ul class="cards" aria-labelledby="runs-by-status">${RUN_STATUSES.map((status) => card(view.last24h[status], status, `/runs?status=${status}`, status))}
${card(view.status.webhookEventsWaiting, 'webhook events waiting', '/webhooks', 'pending')}</ul>`;
}

/** A gateway's roles: its lease (with a shared database), and each chat receiver's role. */
function roles(gateway: GatewayRegistration & Partial<Pick<Replica, 'leaseUntil'>>, timeZone: string): Html {
  const receivers = (gateway.chatReceivers ?? []).map((receiver) => {
    const words = {
      up: `chat receiver (${receiver.platform})`,
      standby: `standby for ${receiver.platform}`,
      down: `${receiver.platform} receiver down`,
      starting: `${receiver.platform} receiver starting`,
    }[receiver.state];
    const tone = { up: 'ok', standby: 'skipped', down: 'error', starting: 'running' }[receiver.state];
    return statusBadge(tone, words);
  });
  const lease = gateway.leaseUntil ? statusBadge('running', `lease holder until ${when(gateway.leaseUntil, timeZone).slice(11)}`) : null;
  const all = [lease, ...receivers].filter((each) => each !== null);
  return all.length === 0 ? html`<span class="muted">runs the jobs of this home</span>` : html`${all.map((each) => html`${each} `)}`;
}

/** The next runs, the gateways with their roles, and the failing jobs. */
export function overviewNow(context: PageContext, view: OverviewNow): Html {
  const { status } = view;
  const replicas: Array<GatewayRegistration & Partial<Pick<Replica, 'leaseUntil'>>> =
    status.replicas ?? (status.gateway.state === 'stopped' ? [] : [status.gateway.gateway]);
  return html`<div class="grid-2"><section aria-labelledby="next-runs"><h2 id="next-runs">Next runs</h2>
${table(
  `The next ${view.nextRuns.length} runs (${context.timeZone})`,
  ['When', 'Job'],
  view.nextRuns.map(
    (each) =>
      html`<tr><td>${when(each.at, context.timeZone)}</td><td><a href="/jobs/${encodeURIComponent(each.job.id)}">${each.job.name}</a></td></tr>`,
  ),
  'No run is scheduled.',
)}</section>
<section aria-labelledby="failing"><h2 id="failing">Jobs whose last run failed</h2>
${table(
  'Failing jobs',
  ['Job', 'Last status', 'Why'],
  status.failedJobs.map(
    (job) =>
      html`<tr><td><a href="/jobs/${encodeURIComponent(job.id)}">${job.name}</a></td><td>${statusBadge(job.lastStatus)}</td><td>${firstLine(job.error)}</td></tr>`,
  ),
  'No job failed its last run.',
)}</section></div>
<h2 id="gateways">Gateways</h2>
${table(
  status.replicas ? 'The gateways sharing the database, with their roles' : 'The gateway serving this home, with its roles',
  ['Host', 'Process id', 'Since', 'Listener', 'Trigger provider', 'Roles'],
  replicas.map(
    (replica) =>
      html`<tr><td>${replica.host}</td><td>${replica.pid}</td><td>${when(replica.startedAt, context.timeZone)}</td><td>${replica.listener ?? 'off'}</td><td>${replica.provider}</td><td>${roles(replica, context.timeZone)}</td></tr>`,
  ),
  'No gateway is registered.',
)}`;
}

/** How long each job's and route's runs take. */
function durationsTable(summary: RunSummary): Html {
  return table(
    'Duration of the finished runs of the last 30 days, slowest first',
    ['Job or route', 'Kind', { text: 'Runs', number: true }, { text: 'p50', number: true }, { text: 'p95', number: true }],
    summary.durations.map(
      (each) =>
        html`<tr><td>${each.kind === 'cron' ? html`<a href="/jobs/${encodeURIComponent(each.subject)}">${each.name}</a>` : each.name}</td><td>${each.kind}</td><td class="number">${each.runs}</td><td class="number">${durationInWords(each.p50_ms)}</td><td class="number">${durationInWords(each.p95_ms)}</td></tr>`,
    ),
    'No run finished in the last 30 days.',
  );
}

export function overviewPage(context: PageContext, view: OverviewNow & { summary: RunSummary; latest: readonly RunRecord[] }): Html {
  const { summary } = view;
  return layout(
    context,
    'Overview',
    html`<form class="inline" method="get" action="/jobs" role="search" aria-label="Find a job">
<label for="search">Search jobs</label>
<input id="search" name="q" type="search" placeholder="a job's name">
<button type="submit">Find</button>
</form>
<div data-live="/fragments/overview/counts">${overviewCounts(view)}</div>
<h2 id="charts">Runs, cron and webhook</h2>
<div class="grid-2">
${runsChart('runs-per-hour', `Runs per hour, last 24 hours (${context.timeZone})`, summary.perHour, 'Hour')}
${runsChart('runs-per-day', `Runs per day, last 30 days (${context.timeZone})`, summary.perDay, 'Day')}
</div>
<div class="grid-2">
<section aria-labelledby="cost"><h2 id="cost">Cost per day per model</h2>
${costChart('cost-per-day', 'Cost per day per model, last 30 days (US dollars)', summary.cost)}</section>
<section aria-labelledby="durations"><h2 id="durations">How long runs take</h2>
${durationsTable(summary)}</section>
</div>
<div data-live="/fragments/overview/now">${overviewNow(context, view)}</div>
<h2 id="latest">Latest runs</h2>
<div data-live="/fragments/runs">${runsTable(view.latest, context.timeZone)}</div>`,
    OVERVIEW_ASSETS,
  );
}
