import { JOB_STATES, type Job } from '../../domain/Job.js';
import { LAST_STATUSES } from '../../domain/RunOutcome.js';
import { describeAfter, describeFollowers, type ChainFollower } from '../../domain/jobChains.js';
import { describeCarriedAnswers, describeRepeat, describeTargets, describeToolsets, describeWorkdir } from '../../domain/jobDetails.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import { budgetInWords, costInWords, tokensInWords, type RunTotals } from '../../domain/runs/runTotals.js';
import { spentFields } from './usageViews.js';
import { isRecurring, SCHEDULE_FORMS } from '../../domain/Schedule.js';
import { describeSchedule } from '../../domain/scheduleWords.js';
import { html, type Html } from './html.js';
import { csrfField, layout, postButton, statusBadge, table, when, type PageContext } from './pageShell.js';
import { perJobFormFields, type PerJobFormValues } from './perJobFields.js';

export { csrfField, layout, postButton, signInPage, statusBadge, table, when, type PageContext } from './pageShell.js';

export function firstLine(text: string | null): string {
  const line =
    text
      ?.split('\n')
      .find((each) => each.trim() !== '')
      ?.trim() ?? '';
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** The runs table, also served alone for the live refresh of the pages that show it. */
export function runsTable(runs: readonly RunRecord[], timeZone: string, caption = 'Runs, newest first'): Html {
  return table(
    caption,
    ['Started', 'Job or route', 'Status', 'Tokens', 'Cost', 'Answer or error', 'Run'],
    runs.map(
      (run) =>
        html`<tr><td>${when(run.started_at, timeZone)}</td><td>${run.kind === 'cron' ? html`<a href="/jobs/${encodeURIComponent(run.subject)}">${run.name}</a>` : run.name}</td><td>${statusBadge(run.status)}</td><td>${tokensInWords(run.usage)}</td><td>${costInWords(run.cost_usd)}</td><td>${firstLine(run.error) || firstLine(run.answer) || '-'}</td><td><a href="/runs/${encodeURIComponent(run.id)}">Details<span class="muted"> of run ${run.id}</span></a></td></tr>`,
    ),
    'No runs yet.',
  );
}

/** A job's next run in its own zone, named, or else in the configured zone. */
function nextRunCell(at: Date | null, job: Job, configuredZone: string): string {
  return job.timezone && at !== null ? `${when(at, job.timezone)} (${job.timezone})` : when(at, configuredZone);
}

/** What the jobs list is filtered by: a state, a last status (`never` for a job that never ran) and a name. */
export interface JobFilter {
  state: string;
  status: string;
  search: string;
}

function options(values: readonly string[], chosen: string, anyLabel = 'any'): Html {
  return html`<option value=""${chosen === '' ? html` selected` : null}>${anyLabel}</option>${values.map(
    (value) => html`<option value="${value}"${chosen === value ? html` selected` : null}>${value}</option>`,
  )}`;
}

export function jobsPage(context: PageContext, view: JobFilter & { jobs: Job[]; nextRuns: Map<string, Date | null> }): Html {
  return layout(
    context,
    'Jobs',
    html`<form class="inline" method="get" action="/jobs" role="search" aria-label="Filter the jobs">
<label for="state">State</label>
<select id="state" name="state">${options(JOB_STATES, view.state)}</select>
<label for="status">Last status</label>
<select id="status" name="status">${options([...LAST_STATUSES, 'never'], view.status)}</select>
<label for="search">Search</label>
<input id="search" name="q" type="search" value="${view.search}" placeholder="a job's name">
<button type="submit">Filter</button>
</form>
<p><a class="button primary" href="/jobs/new">New job</a></p>
${table(
  'Jobs',
  ['Name', 'Schedule', 'State', 'Next run', 'Last status', 'Target'],
  view.jobs.map(
    (job) =>
      html`<tr><td><a href="/jobs/${encodeURIComponent(job.id)}">${job.name}</a></td><td>${job.schedule.display}</td><td>${statusBadge(job.state)}</td><td>${nextRunCell(view.nextRuns.get(job.id) ?? null, job, context.timeZone)}</td><td>${statusBadge(job.last_status)}</td><td>${job.deliver}</td></tr>`,
  ),
  'No job matches.',
)}`,
  );
}

type JobView = {
  job: Job;
  nextRuns: Date[];
  runs: RunRecord[];
  timeZone?: string;
  jobNames?: Readonly<Record<string, string>>;
  followers?: ChainFollower[];
  spent?: { day: RunTotals; month: RunTotals };
};

/**
 * A job's page, its times in its own zone when it has one (`timeZone`), else in the configured
 * zone (`context.timeZone`). What changes as the job runs is refreshed live (jobLive).
 */
export function jobPage(pageContext: PageContext, view: JobView): Html {
  const { job } = view;
  const context = { ...pageContext, timeZone: view.timeZone ?? pageContext.timeZone };
  const id = encodeURIComponent(job.id);
  return layout(
    context,
    `Job ${job.name}`,
    html`<section aria-label="Actions">
${postButton(context, `/jobs/${id}/run`, 'Run now')}
${job.state === 'running' ? postButton(context, `/jobs/${id}/cancel`, 'Cancel run') : ''}
${
  job.state === 'paused'
    ? postButton(context, `/jobs/${id}/resume`, 'Resume')
    : postButton(
        context,
        `/jobs/${id}/pause`,
        'Pause',
        html`<label for="reason">Reason</label><input id="reason" name="reason" type="text" maxlength="500">`,
      )
}
<form class="inline" method="get" action="/jobs/${id}/edit"><button type="submit">Edit</button></form>
<form class="inline" method="get" action="/jobs/${id}/remove"><button type="submit">Remove</button></form>
</section>
<div data-live="/fragments/jobs/${id}">${jobLive(pageContext, view)}</div>`,
  );
}

/**
 * The part of a job's page that changes as it runs: every field (its state and last status
 * among them), the next runs and the run history. Also served alone for the live refresh.
 */
export function jobLive(pageContext: PageContext, view: JobView): Html {
  const { job } = view;
  const context = { ...pageContext, timeZone: view.timeZone ?? pageContext.timeZone };
  const fields: Array<[string, string]> = [
    ['Id', job.id],
    ['Name', job.name],
    ['State', job.state],
    ...(job.state === 'paused'
      ? ([
          ['Paused since', when(job.paused_at, context.timeZone)],
          ['Paused because', job.paused_reason ?? '-'],
        ] as Array<[string, string]>)
      : []),
    ['Schedule', `${describeSchedule(job.schedule, context.timeZone)} (${job.schedule.display})`],
    ['Time zone', job.timezone ? job.timezone : `${pageContext.timeZone} (the configured zone)`],
    ['Prompt', job.prompt],
    ['Skills', job.skills.length > 0 ? job.skills.join(', ') : 'none'],
    ['Script', job.script ?? 'none'],
    ['Agent', job.no_agent ? "not run: the script's output is delivered" : 'runs'],
    ['Toolsets', describeToolsets(job)],
    ['Working folder', describeWorkdir(job)],
    ['Context from', describeCarriedAnswers(job, view.jobNames)],
    ['Runs after', describeAfter(job, view.jobNames)],
    ['Followed by', describeFollowers(view.followers ?? [])],
    ...(isRecurring(job.schedule) ? ([['Catch-up', job.catch_up ?? 'as cron.catch_up']] as Array<[string, string]>) : []),
    [
      'Model',
      job.model === null && job.provider === null ? 'the configured default' : [job.provider, job.model].filter(Boolean).join(' / '),
    ],
    ['Repeat', describeRepeat(job.repeat)],
    ['Budget', budgetInWords(job.budget)],
    ...spentFields(view.spent),
    ['Delivers to', describeTargets(job)],
    ['Created', when(job.created_at, context.timeZone)],
    ['Last run', when(job.last_run_at, context.timeZone)],
    ['Last status', job.last_status ?? '-'],
    ['Last error', job.last_error ?? '-'],
    ['Last delivery error', job.last_delivery_error ?? '-'],
  ];
  return html`<dl>${fields.map(([label, value]) => html`<dt>${label}</dt><dd>${label === 'Prompt' ? html`<pre>${value}</pre>` : value}</dd>`)}</dl>
<h2>Next runs</h2>
${view.nextRuns.length === 0 ? html`<p class="muted">None.</p>` : html`<ul>${view.nextRuns.map((at) => html`<li>${when(at, context.timeZone)} (${context.timeZone})</li>`)}</ul>`}
<h2>Run history</h2>
${jobRuns(view.runs, context.timeZone)}`;
}

/** A job's runs with their answers. */
export function jobRuns(runs: readonly RunRecord[], timeZone: string): Html {
  if (runs.length === 0) return html`<p class="muted">No runs yet.</p>`;
  return html`${runsTable(runs, timeZone, 'Runs of this job, newest first')}${runs.map(
    (run) =>
      html`<article><h3>${when(run.started_at, timeZone)}: ${run.status}</h3>${run.error ? html`<p class="problem">${run.error}</p>` : null}${run.answer !== null ? html`<pre>${run.answer}</pre>` : null}</article>`,
  )}`;
}

/** The values of the New job and Edit forms. */
export interface JobFormValues extends PerJobFormValues {
  schedule: string;
  prompt: string;
  name: string;
  deliver: string;
  skills: string;
  /** The job's own IANA time zone; empty for the configured one. */
  timezone: string;
}

/** The job form's hint of how a schedule is written: the examples of every form. */
const SCHEDULE_PLACEHOLDER = SCHEDULE_FORMS.flatMap((form) => form.examples).join(', ');

export function jobFormPage(context: PageContext, view: { title: string; action: string; values: JobFormValues; submit: string }): Html {
  const { values } = view;
  return layout(
    context,
    view.title,
    html`<form class="stacked" method="post" action="${view.action}">
${csrfField(context)}
<label>Schedule<input name="schedule" type="text" value="${values.schedule}" required placeholder="${SCHEDULE_PLACEHOLDER}"></label>
<label>Prompt<textarea name="prompt" required>${values.prompt}</textarea></label>
<label>Name<input name="name" type="text" value="${values.name}"></label>
<label>Deliver<input name="deliver" type="text" value="${values.deliver}" placeholder="local, origin, telegram:-100123"></label>
<label>Skills<input name="skills" type="text" value="${values.skills}" placeholder="comma-separated"></label>
<label>Time zone<input name="timezone" type="text" value="${values.timezone}" placeholder="${context.timeZone} (the configured zone) or America/New_York, …"></label>
${perJobFormFields(values)}
<button type="submit">${view.submit}</button>
</form>`,
  );
}

export function removePage(context: PageContext, job: Job): Html {
  const id = encodeURIComponent(job.id);
  return layout(
    context,
    `Remove job ${job.name}?`,
    html`<p>The job and its run reports are deleted; this cannot be undone.</p>
${postButton(context, `/jobs/${id}/remove`, 'Remove', html`<input type="hidden" name="confirm" value="yes">`)}
<a href="/jobs/${id}">Cancel</a>`,
  );
}

export function notFoundPage(context: PageContext, what: string): Html {
  return layout(context, 'Not found', html`<p>${what}</p><p><a href="/">Back to the overview</a></p>`);
}
