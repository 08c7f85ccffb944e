import express, { type NextFunction, type Request, type Response } from 'express';
import type { CreateJobInput } from '../../application/cron/CreateJob.js';
import type { EditJobInput } from '../../application/cron/EditJob.js';
import type { RunJobNowOutput } from '../../application/cron/RunJobNow.js';
import type { ShowJobOutput } from '../../application/cron/ShowJob.js';
import type { JobSnapshot } from '../../application/ports/JobRepository.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { RunLedger } from '../../application/ports/RunLedger.js';
import type { WebhookRouteListing } from '../../application/ports/WebhookRoutes.js';
import type { HomeStatus } from '../../application/status/ShowStatus.js';
import type { ListedWebhookRun } from '../../application/webhook/ListWebhookRuns.js';
import { AppError, errorText, InvalidInputError } from '../../domain/errors.js';
import { jobTimeZone, type Job } from '../../domain/Job.js';
import { recordOfJob } from '../../domain/JobRecord.js';
import { upcomingRuns } from '../../domain/jobDetails.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets.js';
import type { Html } from './html.js';
import { cookieValue, DashboardSessions, SESSION_COOKIE } from './sessions.js';
import {
  jobFormPage,
  jobPage,
  jobRuns,
  jobsPage,
  JOB_STATES,
  notFoundPage,
  overviewPage,
  removePage,
  runPage,
  runsTable,
  signInPage,
  webhooksPage,
  type JobFormValues,
  type PageContext,
} from './views.js';

/** The use cases the dashboard acts through: the very ones of the command line. */
export interface DashboardDependencies {
  /** `AGENT_DASHBOARD_TOKEN` or `dashboard.token`; null: no sign-in (a loopback listener only). */
  token: string | null;
  timeZone: string;
  log: Logger;
  jobs: {
    list(): Promise<JobSnapshot>;
    show(job: string): Promise<ShowJobOutput>;
    create(input: CreateJobInput): Promise<Job>;
    edit(input: EditJobInput): Promise<Job>;
    pause(job: string, reason: string | null): Promise<Job>;
    resume(job: string): Promise<Job>;
    remove(job: string): Promise<Job>;
    /** Starts a run now; resolves once it started. */
    runNow(job: string): Promise<{ job: Job; finished: Promise<RunJobNowOutput> }>;
  };
  runs: RunLedger;
  status(): Promise<HomeStatus>;
  webhooks: {
    listing(): Promise<WebhookRouteListing>;
    runs(limit: number): Promise<ListedWebhookRun[]>;
    sendTest(name: string): Promise<{ status: number; body: string }>;
  };
}

/** The most runs a page lists. */
const RUNS_SHOWN = 20;

type Session = NonNullable<ReturnType<DashboardSessions['find']>>;

/**
 * The dashboard (docs/dashboard.md): server-rendered pages over the CLI's own use cases, and a
 * JSON API under /api. Signing in with the token gives a session cookie (HttpOnly,
 * SameSite=Strict); the API also takes `Authorization: Bearer <token>`. Every change is a POST
 * carrying the session's CSRF token; every value from a job, a model or a payload is rendered as
 * text; a strict Content-Security-Policy allows only the dashboard's own style sheet and script.
 */
export function createDashboardApp(deps: DashboardDependencies): express.Express {
  const sessions = new DashboardSessions(deps.token);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((_request, response, next) => {
    response.set({
      'content-security-policy':
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    });
    next();
  });
  app.use(express.urlencoded({ extended: false, limit: '64kb' }));

  app.get('/assets/dashboard.css', (_request, response) => void response.type('text/css').send(DASHBOARD_CSS));
  app.get('/assets/dashboard.js', (_request, response) => void response.type('text/javascript').send(DASHBOARD_JS));

  const setCookie = (response: Response, id: string) =>
    response.setHeader('set-cookie', `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict`);

  app.post('/sign-in', (request, response) => {
    if (!sessions.tokenMatches(typeof request.body?.token === 'string' ? request.body.token : undefined)) {
      deps.log.warn('dashboard: a sign-in with a wrong token was refused');
      response.status(401).type('html').send(signInPage('That token is not the dashboard token; try again.').text);
      return;
    }
    setCookie(response, sessions.open());
    response.redirect(303, '/');
  });

  /** The session of the request; without a token configured, one is opened on the first visit. */
  const sessionOf = (request: Request, response: Response): Session | null => {
    const id = cookieValue(request.headers.cookie, SESSION_COOKIE);
    const session = sessions.find(id);
    if (session || deps.token !== null) return session;
    const opened = sessions.open();
    setCookie(response, opened);
    return sessions.find(opened);
  };

  const bearer = (request: Request) => /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];

  // The JSON API: a Bearer token, or a signed-in session (reads only, for the page's own refresh).
  const api = express.Router();
  api.use((request, response, next) => {
    const token = bearer(request);
    if (deps.token !== null && token !== undefined && sessions.tokenMatches(token)) return next();
    if (request.method === 'GET' && sessionOf(request, response)) return next();
    response.status(401).json({ error: 'Sign in, or send Authorization: Bearer <the dashboard token>.' });
  });
  api.get('/jobs', json(async () => (await deps.jobs.list()).jobs.map(recordOfJob)));
  api.get('/jobs/:job', json(async (request) => {
    const shown = await deps.jobs.show(param(request, 'job'));
    return { ...recordOfJob(shown.job), next_runs: shown.nextRuns.map((at) => at.toISOString()) };
  }));
  api.get('/runs', json(async (request) => {
    const job = typeof request.query.job === 'string' ? request.query.job : undefined;
    return deps.runs.list(job ? { kind: 'cron', subject: job, limit: RUNS_SHOWN } : { limit: RUNS_SHOWN });
  }));
  api.get('/runs/:id', json(async (request) => (await deps.runs.get(param(request, 'id'))) ?? notFound(`No run has the id ${param(request, 'id')}.`)));
  api.post('/jobs/:job/pause', json(async (request) => recordOfJob(await deps.jobs.pause(param(request, 'job'), reasonOf(request)))));
  api.post('/jobs/:job/resume', json(async (request) => recordOfJob(await deps.jobs.resume(param(request, 'job')))));
  api.post('/jobs/:job/run', json(async (request) => recordOfJob((await deps.jobs.runNow(param(request, 'job'))).job)));
  app.use('/api', express.json({ limit: '64kb' }), api);

  // Every page below needs a session; a change needs its CSRF token too.
  app.use((request, response, next) => {
    const session = sessionOf(request, response);
    if (!session) {
      if (request.method === 'GET' && (request.path === '/' || request.accepts('html'))) {
        response.status(deps.token !== null && request.path === '/' ? 200 : 401).type('html').send(signInPage(null).text);
      } else response.status(401).type('text').send('Sign in first.');
      return;
    }
    if (request.method === 'POST' && !DashboardSessions.csrfMatches(session, request.body?.csrf)) {
      response.status(403).type('text').send('This form is out of date or did not come from the dashboard (its CSRF token is missing or wrong); reload the page and try again.');
      return;
    }
    response.locals.session = session;
    next();
  });

  const context = (response: Response, extra: Partial<PageContext> = {}): PageContext => ({
    timeZone: deps.timeZone,
    csrf: (response.locals.session as Session).csrf,
    signedIn: deps.token !== null,
    ...extra,
  });
  const page = (response: Response, body: Html, status = 200) => void response.status(status).type('html').send(body.text);
  const said = (request: Request) => ({
    notice: typeof request.query.done === 'string' ? request.query.done : null,
    problem: typeof request.query.problem === 'string' ? request.query.problem : null,
  });

  app.post('/sign-out', (request, response) => {
    sessions.close(cookieValue(request.headers.cookie, SESSION_COOKIE));
    response.setHeader('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
    response.redirect(303, '/');
  });

  app.get('/', handle(async (request, response) => {
    const [status, snapshot, latest] = await Promise.all([deps.status(), deps.jobs.list(), deps.runs.list({ limit: RUNS_SHOWN })]);
    const nextRuns = snapshot.jobs
      .filter((job) => job.state === 'scheduled')
      .flatMap((job) => upcomingRuns(job, 10, deps.timeZone).map((at) => ({ job, at })))
      .sort((a, b) => a.at.getTime() - b.at.getTime())
      .slice(0, 10);
    const scheduledJobs = snapshot.jobs.filter((job) => job.state === 'scheduled').length;
    page(response, overviewPage(context(response, said(request)), { status, scheduledJobs, nextRuns, latest }));
  }));
  app.get('/fragments/runs', handle(async (_request, response) => {
    page(response, runsTable(await deps.runs.list({ limit: RUNS_SHOWN }), deps.timeZone));
  }));

  app.get('/jobs', handle(async (request, response) => {
    const state = typeof request.query.state === 'string' && (JOB_STATES as readonly string[]).includes(request.query.state) ? request.query.state : '';
    const search = typeof request.query.q === 'string' ? request.query.q.trim() : '';
    const { jobs } = await deps.jobs.list();
    const shown = jobs.filter((job) => (state === '' || job.state === state) && (search === '' || job.name.toLowerCase().includes(search.toLowerCase())));
    const nextRuns = new Map(shown.map((job) => [job.id, job.state === 'scheduled' ? (upcomingRuns(job, 1, deps.timeZone)[0] ?? null) : null]));
    page(response, jobsPage(context(response, said(request)), { jobs: shown, state, search, nextRuns }));
  }));

  const emptyForm: JobFormValues = { schedule: '', prompt: '', name: '', deliver: '', skills: '', timezone: '' };
  app.get('/jobs/new', (_request, response) => page(response, jobFormPage(context(response), { title: 'New job', action: '/jobs', values: emptyForm, submit: 'Create job' })));
  app.post('/jobs', handle(async (request, response) => {
    const values = formValues(request);
    try {
      const job = await deps.jobs.create({
        schedule: values.schedule,
        prompt: values.prompt,
        name: values.name.trim() || null,
        deliver: values.deliver.trim() || null,
        skills: skillList(values.skills),
        timezone: values.timezone.trim() || null,
      });
      response.redirect(303, `/jobs/${encodeURIComponent(job.id)}?done=${encodeURIComponent(`Created job ${job.name}.`)}`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      page(response, jobFormPage(context(response, { problem: error.message }), { title: 'New job', action: '/jobs', values, submit: 'Create job' }), 400);
    }
  }));

  app.get('/jobs/:job', handle(async (request, response) => {
    const shown = await deps.jobs.show(param(request, 'job'));
    const runs = await deps.runs.list({ kind: 'cron', subject: shown.job.id, limit: RUNS_SHOWN });
    page(response, jobPage(context(response, said(request)), { job: shown.job, nextRuns: shown.nextRuns, runs, timeZone: shown.timeZone }));
  }));
  app.get('/fragments/jobs/:job/runs', handle(async (request, response) => {
    // In the job's zone, as its page shows them (the configured one when the job is gone).
    const job = (await deps.jobs.list()).jobs.find((each) => each.id === param(request, 'job'));
    page(response, jobRuns(await deps.runs.list({ kind: 'cron', subject: param(request, 'job'), limit: RUNS_SHOWN }), jobTimeZone(job ?? {}, deps.timeZone)));
  }));
  app.get('/jobs/:job/edit', handle(async (request, response) => {
    const { job } = await deps.jobs.show(param(request, 'job'));
    const values = { schedule: job.schedule.display, prompt: job.prompt, name: job.name, deliver: job.deliver, skills: job.skills.join(', '), timezone: job.timezone ?? '' };
    page(response, jobFormPage(context(response), { title: `Edit job ${job.name}`, action: `/jobs/${encodeURIComponent(job.id)}/edit`, values, submit: 'Save' }));
  }));
  app.post('/jobs/:job/edit', handle(async (request, response) => {
    const values = formValues(request);
    const id = param(request, 'job');
    try {
      // Only what was changed: an unchanged one-shot time that has passed meanwhile is not refused.
      const { job: current } = await deps.jobs.show(id);
      const changes: EditJobInput = { job: current.id };
      if (values.schedule.trim() !== current.schedule.display) changes.schedule = values.schedule;
      if (values.prompt !== current.prompt) changes.prompt = values.prompt;
      if (values.name !== current.name) changes.name = values.name;
      if (values.deliver !== current.deliver) changes.deliver = values.deliver;
      const skills = skillList(values.skills);
      if (skills.join(',') !== current.skills.join(',')) changes.skills = skills;
      if (values.timezone.trim() !== (current.timezone ?? '')) changes.timezone = values.timezone.trim() || null;
      const job = await deps.jobs.edit(changes);
      response.redirect(303, `/jobs/${encodeURIComponent(job.id)}?done=${encodeURIComponent('Saved.')}`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      page(response, jobFormPage(context(response, { problem: error.message }), { title: 'Edit job', action: `/jobs/${encodeURIComponent(id)}/edit`, values, submit: 'Save' }), 400);
    }
  }));

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
  app.post('/jobs/:job/pause', jobAction(async (id, request) => {
    const job = await deps.jobs.pause(id, reasonOf(request));
    return job.paused_reason ? `Paused: ${job.paused_reason}.` : 'Paused.';
  }));
  app.post('/jobs/:job/resume', jobAction(async (id) => (await deps.jobs.resume(id), 'Resumed.')));
  app.post('/jobs/:job/run', jobAction(async (id) => {
    const started = await deps.jobs.runNow(id);
    void started.finished.catch((error: unknown) => deps.log.error(`dashboard: the run of job '${started.job.name}' failed unexpectedly: ${errorText(error)}`));
    return 'The run started; it shows below as it goes.';
  }));
  app.get('/jobs/:job/remove', handle(async (request, response) => {
    page(response, removePage(context(response), (await deps.jobs.show(param(request, 'job'))).job));
  }));
  app.post('/jobs/:job/remove', handle(async (request, response) => {
    if (request.body?.confirm !== 'yes') {
      response.redirect(303, `/jobs/${encodeURIComponent(param(request, 'job'))}/remove`);
      return;
    }
    const job = await deps.jobs.remove(param(request, 'job'));
    response.redirect(303, `/jobs?done=${encodeURIComponent(`Removed job ${job.name}.`)}`);
  }));

  app.get('/runs/:id', handle(async (request, response) => {
    const run = await deps.runs.get(param(request, 'id'));
    if (!run) return page(response, notFoundPage(context(response), `No run has the id ${param(request, 'id')}; it may be older than the run ledger keeps.`), 404);
    page(response, runPage(context(response), run));
  }));

  app.get('/webhooks', handle(async (request, response) => {
    const [listing, runs] = await Promise.all([deps.webhooks.listing(), deps.webhooks.runs(100)]);
    page(response, webhooksPage(context(response, said(request)), { routes: listing.routes, runs }));
  }));
  app.post('/webhooks/:name/test', handle(async (request, response) => {
    const name = param(request, 'name');
    try {
      const sent = await deps.webhooks.sendTest(name);
      const said = sent.status < 400 ? `done=${encodeURIComponent(`The test event was accepted (${sent.status}).`)}` : `problem=${encodeURIComponent(`The listener refused the test event (${sent.status}): ${sent.body}`)}`;
      response.redirect(303, `/webhooks?${said}`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      response.redirect(303, `/webhooks?problem=${encodeURIComponent(error.message)}`);
    }
  }));

  app.use((request, response) => {
    if (!response.locals.session) return void response.status(404).type('text').send('Not found.');
    page(response, notFoundPage(context(response), `There is no page at ${request.path}.`), 404);
  });
  app.use((error: unknown, request: Request, response: Response, _next: NextFunction) => {
    if (error instanceof AppError) {
      const status = error instanceof InvalidInputError ? 400 : /NOT_FOUND|AMBIGUOUS/.test(error.code) ? 404 : 409;
      if (request.path.startsWith('/api/') || request.baseUrl === '/api') return void response.status(status).json({ error: error.message });
      if (response.locals.session) return page(response, notFoundPage(context(response), error.message), status);
      return void response.status(status).type('text').send(error.message);
    }
    deps.log.error(`dashboard: ${request.method} ${request.path} failed: ${errorText(error)}`);
    response.status(500).type('text').send('Something went wrong; the gateway log says what.');
  });
  return app;
}

/** An async route whose errors reach the error handler. */
function handle(route: (request: Request, response: Response) => Promise<void>) {
  return (request: Request, response: Response, next: NextFunction) => void route(request, response).catch(next);
}

/** An API route answering what `produce` returns, as JSON. */
function json(produce: (request: Request) => Promise<unknown>) {
  return handle(async (request, response) => void response.json(await produce(request)));
}

function notFound(message: string): never {
  throw new AppError(ERROR_CODES.DASHBOARD.RUN_NOT_FOUND, message);
}

function param(request: Request, name: string): string {
  const value = request.params[name];
  return typeof value === 'string' ? value : '';
}

function reasonOf(request: Request): string | null {
  const reason = request.body?.reason;
  return typeof reason === 'string' && reason.trim() !== '' ? reason : null;
}

function formValues(request: Request): JobFormValues {
  const field = (name: string) => (typeof request.body?.[name] === 'string' ? (request.body[name] as string) : '');
  return { schedule: field('schedule'), prompt: field('prompt'), name: field('name'), deliver: field('deliver'), skills: field('skills'), timezone: field('timezone') };
}

function skillList(text: string): string[] {
  return text
    .split(',')
    .map((skill) => skill.trim())
    .filter((skill) => skill !== '');
}
