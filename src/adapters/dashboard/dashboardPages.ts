/**
 * The dashboard's pages, rendered on the server (views.ts): the jobs with their forms and
 * actions; the overview (overviewRoutes.ts), the webhooks (webhookRoutes.ts) and the runs (runRoutes.ts).
 */
import type { Express, Request, Response } from 'express';
import type { EditJobInput } from '../../application/cron/EditJob.js';
import type { ShowJobOutput } from '../../application/cron/ShowJob.js';
import { AppError, errorText } from '../../domain/errors.js';
import { JOB_STATES } from '../../domain/Job.js';
import { upcomingRuns } from '../../domain/jobDetails.js';
import { nameKey } from '../../domain/jobNames.js';
import { LAST_STATUSES } from '../../domain/RunOutcome.js';
import type { Session } from './dashboardAccess.js';
import type { DashboardDependencies } from './dashboardDependencies.js';
import type { Html } from './html.js';
import { registerOverview } from './overviewRoutes.js';
import { handle, param, reasonOf, RUNS_SHOWN } from './routeHelpers.js';
import { registerWebhookPages } from './webhookRoutes.js';
import { jobFormPage, jobLive, jobPage, jobsPage, removePage, type JobFormValues, type PageContext } from './views.js';

/** How a page is answered: its context (the session's CSRF token, what was done or refused), and the page sent. */
export function pageResponses(deps: DashboardDependencies) {
  const context = (response: Response, extra: Partial<PageContext> = {}): PageContext => ({
    timeZone: deps.timeZone,
    csrf: (response.locals.session as Session).csrf,
    signedIn: deps.token !== null,
    path: response.req.path,
    ...extra,
  });
  const page = (response: Response, body: Html, status = 200) => void response.status(status).type('html').send(body.text);
  const said = (request: Request) => ({
    notice: typeof request.query.done === 'string' ? request.query.done : null,
    problem: typeof request.query.problem === 'string' ? request.query.problem : null,
  });
  return { context, page, said };
}

/** The page routes; each needs a session or the bearer token, which the app checks before them. */
export function registerPages(app: Express, deps: DashboardDependencies): void {
  const { context, page, said } = pageResponses(deps);

  registerOverview(app, deps);

  app.get(
    '/jobs',
    handle(async (request, response) => {
      const state =
        typeof request.query.state === 'string' && (JOB_STATES as readonly string[]).includes(request.query.state)
          ? request.query.state
          : '';
      const status =
        typeof request.query.status === 'string' && [...LAST_STATUSES, 'never'].includes(request.query.status) ? request.query.status : '';
      const search = typeof request.query.q === 'string' ? request.query.q.trim() : '';
      const { jobs } = await deps.jobs.list();
      const shown = jobs.filter(
        (job) =>
          (state === '' || job.state === state) &&
          (status === '' || (job.last_status ?? 'never') === status) &&
          (search === '' || nameKey(job.name).includes(nameKey(search))),
      );
      const nextRuns = new Map(
        shown.map((job) => [job.id, job.state === 'scheduled' ? (upcomingRuns(job, 1, deps.timeZone)[0] ?? null) : null]),
      );
      page(response, jobsPage(context(response, said(request)), { jobs: shown, state, status, search, nextRuns }));
    }),
  );

  const emptyForm: JobFormValues = {
    schedule: '',
    prompt: '',
    name: '',
    deliver: '',
    skills: '',
    timezone: '',
    toolsets: '',
    workdir: '',
    context_from: '',
    continue: false,
    after: '',
  };
  app.get('/jobs/new', (_request, response) =>
    page(response, jobFormPage(context(response), { title: 'New job', action: '/jobs', values: emptyForm, submit: 'Create job' })),
  );
  app.post(
    '/jobs',
    handle(async (request, response) => {
      const values = formValues(request);
      try {
        const job = await deps.jobs.create({
          schedule: values.schedule,
          prompt: values.prompt,
          name: values.name.trim() || null,
          deliver: values.deliver.trim() || null,
          skills: skillList(values.skills),
          timezone: values.timezone.trim() || null,
          toolsets: skillList(values.toolsets),
          workdir: values.workdir.trim() || null,
          context_from: skillList(values.context_from),
          continue: values.continue,
          after: skillList(values.after),
        });
        response.redirect(303, `/jobs/${encodeURIComponent(job.id)}?done=${encodeURIComponent(`Created job ${job.name}.`)}`);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        page(
          response,
          jobFormPage(context(response, { problem: error.message }), { title: 'New job', action: '/jobs', values, submit: 'Create job' }),
          400,
        );
      }
    }),
  );

  /**
   * A job and its runs as they stand together: the ledger is read first, then the job. A run's
   * end is written on the job before the ledger records it, so a run the ledger shows ended is
   * ended on the job read after it (its state and last status are the run's).
   */
  const jobWithRuns = async (ref: string) => {
    const { job } = await deps.jobs.show(ref);
    const runs = await deps.runs.list({ kind: 'cron', subject: job.id, limit: RUNS_SHOWN });
    const shown = await deps.jobs.show(job.id);
    return {
      job: shown.job,
      nextRuns: shown.nextRuns,
      runs,
      timeZone: shown.timeZone,
      jobNames: shown.jobNames,
      followers: shown.followers ?? [],
      ...(shown.spent ? { spent: shown.spent } : {}),
    };
  };
  app.get(
    '/jobs/:job',
    handle(async (request, response) => {
      page(response, jobPage(context(response, said(request)), await jobWithRuns(param(request, 'job'))));
    }),
  );
  // The part of a job's page that changes as it runs (state, last status, next runs, run history), for its live refresh.
  app.get(
    '/fragments/jobs/:job',
    handle(async (request, response) => {
      page(response, jobLive(context(response), await jobWithRuns(param(request, 'job'))));
    }),
  );
  app.get(
    '/jobs/:job/edit',
    handle(async (request, response) => {
      const shown = await deps.jobs.show(param(request, 'job'));
      const { job } = shown;
      const values: JobFormValues = {
        schedule: job.schedule.display,
        prompt: job.prompt,
        name: job.name,
        deliver: job.deliver,
        skills: job.skills.join(', '),
        timezone: job.timezone ?? '',
        ...perJobFormValues(shown),
      };
      page(
        response,
        jobFormPage(context(response), {
          title: `Edit job ${job.name}`,
          action: `/jobs/${encodeURIComponent(job.id)}/edit`,
          values,
          submit: 'Save',
        }),
      );
    }),
  );
  app.post(
    '/jobs/:job/edit',
    handle(async (request, response) => {
      const values = formValues(request);
      const id = param(request, 'job');
      try {
        // Only what was changed: an unchanged one-shot time that has passed meanwhile is not refused.
        const shown = await deps.jobs.show(id);
        const { job: current } = shown;
        const changes: EditJobInput = { job: current.id };
        if (values.schedule.trim() !== current.schedule.display) changes.schedule = values.schedule;
        if (values.prompt !== current.prompt) changes.prompt = values.prompt;
        if (values.name !== current.name) changes.name = values.name;
        if (values.deliver !== current.deliver) changes.deliver = values.deliver;
        const skills = skillList(values.skills);
        if (skills.join(',') !== current.skills.join(',')) changes.skills = skills;
        if (values.timezone.trim() !== (current.timezone ?? '')) changes.timezone = values.timezone.trim() || null;
        Object.assign(changes, perJobChanges(values, perJobFormValues(shown)));
        const job = await deps.jobs.edit(changes);
        response.redirect(303, `/jobs/${encodeURIComponent(job.id)}?done=${encodeURIComponent('Saved.')}`);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        page(
          response,
          jobFormPage(context(response, { problem: error.message }), {
            title: 'Edit job',
            action: `/jobs/${encodeURIComponent(id)}/edit`,
            values,
            submit: 'Save',
          }),
          400,
        );
      }
    }),
  );

  /** A job action from its page: back to the page, saying what happened or why it was refused. */
  const jobAction = (act: (job: string, request: Request) => Promise<string>) =>
    handle(async (request, response) => {
      const id = param(request, 'job');
      try {
        const done = await act(id, request);
        response.redirect(303, `/jobs/${encodeURIComponent(id)}?done=${encodeURIComponent(done)}`);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        response.redirect(303, `/jobs/${encodeURIComponent(id)}?problem=${encodeURIComponent(error.message)}`);
      }
    });
  app.post(
    '/jobs/:job/pause',
    jobAction(async (id, request) => {
      const job = await deps.jobs.pause(id, reasonOf(request));
      return job.paused_reason ? `Paused: ${job.paused_reason}.` : 'Paused.';
    }),
  );
  app.post(
    '/jobs/:job/resume',
    jobAction(async (id) => (await deps.jobs.resume(id), 'Resumed.')),
  );
  app.post(
    '/jobs/:job/cancel',
    jobAction(async (id) => (await deps.jobs.cancel(id), 'Asked the run to stop; it shows below as cancelled once it has.')),
  );
  app.post(
    '/jobs/:job/run',
    jobAction(async (id) => {
      const started = await deps.jobs.runNow(id);
      void started.finished.catch((error: unknown) =>
        deps.log.error(`dashboard: the run of job '${started.job.name}' failed unexpectedly: ${errorText(error)}`),
      );
      return 'The run started; it shows below as it goes.';
    }),
  );
  app.get(
    '/jobs/:job/remove',
    handle(async (request, response) => {
      page(response, removePage(context(response), (await deps.jobs.show(param(request, 'job'))).job));
    }),
  );
  app.post(
    '/jobs/:job/remove',
    handle(async (request, response) => {
      if (request.body?.confirm !== 'yes') {
        response.redirect(303, `/jobs/${encodeURIComponent(param(request, 'job'))}/remove`);
        return;
      }
      const job = await deps.jobs.remove(param(request, 'job'));
      response.redirect(303, `/jobs?done=${encodeURIComponent(`Removed job ${job.name}.`)}`);
    }),
  );

  registerWebhookPages(app, deps);
}

function formValues(request: Request): JobFormValues {
  const field = (name: string) => (typeof request.body?.[name] === 'string' ? (request.body[name] as string) : '');
  return {
    schedule: field('schedule'),
    prompt: field('prompt'),
    name: field('name'),
    deliver: field('deliver'),
    skills: field('skills'),
    timezone: field('timezone'),
    toolsets: field('toolsets'),
    workdir: field('workdir'),
    context_from: field('context_from'),
    // A checkbox sends its value only when ticked.
    continue: field('continue') !== '',
    after: field('after'),
  };
}

/** The form's values of a job's toolsets, working folder and answers carried forward (jobs by name where they still exist). */
function perJobFormValues({
  job,
  jobNames = {},
}: ShowJobOutput): Pick<JobFormValues, 'toolsets' | 'workdir' | 'context_from' | 'continue' | 'after'> {
  const named = (id: string) => (Object.hasOwn(jobNames, id) ? jobNames[id]! : id);
  return {
    after: (job.after ?? []).map((link) => (link.on === 'ok' ? named(link.job) : `${named(link.job)}:${link.on}`)).join(', '),
    toolsets: (job.toolsets ?? []).join(', '),
    workdir: job.workdir ?? '',
    context_from: (job.context_from ?? []).map((id) => (Object.hasOwn(jobNames, id) ? jobNames[id]! : id)).join(', '),
    continue: job.continue ?? false,
  };
}

/** What the Edit form changed of them: only the fields whose value differs from the one shown. */
function perJobChanges(values: JobFormValues, shown: ReturnType<typeof perJobFormValues>): Partial<EditJobInput> {
  const changes: Partial<EditJobInput> = {};
  if (skillList(values.toolsets).join(',') !== skillList(shown.toolsets).join(',')) changes.toolsets = skillList(values.toolsets);
  if (values.workdir.trim() !== shown.workdir) changes.workdir = values.workdir.trim() || null;
  if (skillList(values.context_from).join(',') !== skillList(shown.context_from).join(','))
    changes.context_from = skillList(values.context_from);
  if (values.continue !== shown.continue) changes.continue = values.continue;
  if (skillList(values.after).join(',') !== skillList(shown.after).join(',')) changes.after = skillList(values.after);
  return changes;
}

function skillList(text: string): string[] {
  return text
    .split(',')
    .map((skill) => skill.trim())
    .filter((skill) => skill !== '');
}
