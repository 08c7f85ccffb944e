import express, { type NextFunction, type Request, type Response } from 'express';
import type { CreateJobInput } from '../../application/cron/CreateJob.js';
import type { EditJobInput } from '../../application/cron/EditJob.js';
import type { RunJobNowOutput } from '../../application/cron/RunJobNow.js';
import type { ShowJobOutput } from '../../application/cron/ShowJob.js';
import type { Clock } from '../../application/ports/Clock.js';
import type { JobSnapshot } from '../../application/ports/JobRepository.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { RunLedger } from '../../application/ports/RunLedger.js';
import type { WebhookRouteListing } from '../../application/ports/WebhookRoutes.js';
import type { HomeStatus } from '../../application/status/ShowStatus.js';
import type { ListedWebhookRun } from '../../application/webhook/ListWebhookRuns.js';
import { AppError, errorText, InvalidInputError } from '../../domain/errors.js';
import type { Job } from '../../domain/Job.js';
import { recordOfJob } from '../../domain/JobRecord.js';
import { upcomingRuns } from '../../domain/jobDetails.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { listenerVerdict, testEventSentence } from '../../domain/webhook/listenerAnswer.js';
import { createJobBody, editJobBody } from './apiBodies.js';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets.js';
import type { Html } from './html.js';
import { hostOfHeader, LOOPBACK_NAMES, normalHost } from './hosts.js';
import { cookieValue, DashboardSessions, SECURE_SESSION_COOKIE, SESSION_COOKIE } from './sessions.js';
import { SignInThrottle } from './signInThrottle.js';
import {
  jobFormPage,
  jobLive,
  jobPage,
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
  /**
   * With a token: the names the dashboard answers at besides the loopback names (`Host` without
   * its port; `dashboard.allowed_hosts`, by default the listen address). Without a token it
   * answers at the loopback names only. Default: none.
   */
  allowedHosts?: readonly string[];
  /** `dashboard.trust_proxy`: take the scheme, host and client address from the proxy's `X-Forwarded-*` headers. Default: false. */
  trustProxy?: boolean;
  /** The time of the sign-in backoff and of sessions. Default: the machine's. */
  clock?: Clock;
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
/** The methods that change nothing: the others need the token, or a session and its CSRF token. */
const READING = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Every answer's security headers. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

type Session = NonNullable<ReturnType<DashboardSessions['find']>>;

/**
 * The dashboard (docs/dashboard.md): server-rendered pages over the CLI's own use cases, and a
 * JSON API under /api. Signing in with the token gives a session cookie (HttpOnly,
 * SameSite=Strict); `Authorization: Bearer <token>` is taken on every method, by the API and by
 * the pages (a browser never sends that header on its own, so it needs no CSRF token). A change
 * made with the session cookie carries the session's CSRF token; every value from a job, a model
 * or a payload is rendered as text; a strict Content-Security-Policy allows only the dashboard's
 * own style sheet and script, and no page may frame it.
 *
 * It answers only requests addressed to a name it serves (421 otherwise: a page whose name was
 * made to resolve to this machine, DNS rebinding, reads and changes nothing), and a token may be
 * guessed only a few times before sign-ins wait (429, SignInThrottle).
 */
export function createDashboardApp(deps: DashboardDependencies): express.Express {
  const clock = deps.clock ?? { now: () => new Date() };
  const sessions = new DashboardSessions(deps.token, () => clock.now().getTime());
  const throttle = new SignInThrottle(clock, deps.log);
  const trustProxy = deps.trustProxy === true;
  const servedHosts = new Set([...LOOPBACK_NAMES, ...(deps.token !== null ? (deps.allowedHosts ?? []).map(normalHost) : [])]);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Behind a proxy the socket's peer is the proxy: its X-Forwarded-For (the address it appended)
  // and X-Forwarded-Proto are taken; without trust_proxy they are ignored.
  app.set('trust proxy', trustProxy ? 1 : false);
  app.use((_request, response, next) => {
    response.set(SECURITY_HEADERS);
    next();
  });
  app.use((request, response, next) => {
    const refusal = hostRefusal(request);
    if (refusal === null) return next();
    if (isApiRequest(request)) return void response.status(421).json({ error: refusal });
    response.status(421).type('text').send(refusal);
  });
  app.use(express.urlencoded({ extended: false, limit: '64kb' }));

  app.get('/assets/dashboard.css', (_request, response) => void response.type('text/css').send(DASHBOARD_CSS));
  app.get('/assets/dashboard.js', (_request, response) => void response.type('text/javascript').send(DASHBOARD_JS));

  /** The host the request is addressed to (behind a trusted proxy, the one the client asked the proxy for). */
  function requestedHost(request: Request): string | undefined {
    const forwarded = trustProxy ? request.headers['x-forwarded-host'] : undefined;
    const host = typeof forwarded === 'string' && forwarded.trim() !== '' ? forwarded.split(',')[0] : request.headers.host;
    return host?.trim();
  }

  /** Why the request is not answered (its Host is not a name the dashboard serves), or null. */
  function hostRefusal(request: Request): string | null {
    const given = requestedHost(request);
    const host = hostOfHeader(given);
    if (host !== null && servedHosts.has(host)) return null;
    const shown = given ? `"${given.slice(0, 100)}"` : null;
    if (deps.token === null) {
      return `A dashboard without a token answers only at 127.0.0.1, localhost or [::1], ${shown ? `not at ${shown}` : 'and this request names no host'}; open it at one of those, or set a dashboard token and add the name to dashboard.allowed_hosts.`;
    }
    return `The dashboard does not answer ${shown ? `at ${shown}` : 'a request that names no host'}; open it at the address it listens on, or add the name to dashboard.allowed_hosts.`;
  }

  /** The session cookie's name: `__Host-` prefixed over https, the plain name over http, which cannot set `Secure`. */
  const cookieName = (request: Request) => (request.secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE);
  const cookieAttributes = (request: Request) => `Path=/; HttpOnly; SameSite=Strict${request.secure ? '; Secure' : ''}`;
  const setCookie = (request: Request, response: Response, id: string) =>
    response.setHeader('set-cookie', `${cookieName(request)}=${id}; ${cookieAttributes(request)}`);
  /** The client's address (behind a trusted proxy, the one the proxy saw), for the sign-in backoff. */
  const clientOf = (request: Request) => (request.ip ?? request.socket.remoteAddress ?? 'an unknown address').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
  /** The sentence of a 429 while `seconds` remain of a backoff. */
  const waitSentence = (seconds: number) => `Too many wrong tokens were tried; try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;
  /**
   * Whether `given` is the token, counted by the backoff: 'wait' (with the seconds) while the
   * client's attempts are refused, whatever it gave; otherwise 'right' or 'wrong'.
   */
  const tokenVerdict = (request: Request, given: string | undefined, what: string): { kind: 'right' | 'wrong' } | { kind: 'wait'; seconds: number } => {
    const client = clientOf(request);
    const seconds = throttle.waitSeconds(client);
    if (seconds > 0) return { kind: 'wait', seconds };
    if (sessions.tokenMatches(given)) {
      throttle.succeeded(client);
      return { kind: 'right' };
    }
    throttle.failed(client, what);
    return { kind: 'wrong' };
  };

  app.post('/sign-in', (request, response) => {
    if (deps.token !== null) {
      const verdict = tokenVerdict(request, typeof request.body?.token === 'string' ? request.body.token : undefined, 'sign-in');
      if (verdict.kind === 'wait') {
        response.status(429).set('retry-after', String(verdict.seconds)).type('html').send(signInPage(waitSentence(verdict.seconds)).text);
        return;
      }
      if (verdict.kind === 'wrong') {
        response.status(401).type('html').send(signInPage('That token is not the dashboard token; try again.').text);
        return;
      }
    }
    setCookie(request, response, sessions.open());
    response.redirect(303, '/');
  });

  /** The session of the request; without a token configured, one is opened on the first visit. */
  const sessionOf = (request: Request, response: Response): Session | null => {
    const id = cookieValue(request.headers.cookie, cookieName(request));
    const session = sessions.find(id);
    if (session || deps.token !== null) return session;
    const opened = sessions.open();
    setCookie(request, response, opened);
    return sessions.find(opened);
  };

  const bearer = (request: Request) => /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim();
  /** What the request's bearer token is, counted by the backoff: 'none' without one (or without a token configured). */
  const bearerVerdict = (request: Request) => {
    const token = bearer(request);
    if (deps.token === null || token === undefined) return { kind: 'none' } as const;
    return tokenVerdict(request, token, 'bearer token');
  };

  // The JSON API: the Bearer token on every method, or a signed-in session (reads only, for
  // scripts of the page). Without a token configured (a loopback listener) it answers everyone
  // on this machine, as the pages do; a change that a web page in a browser sent is refused.
  const api = express.Router();
  api.use((request, response, next) => {
    if (deps.token === null) {
      const refusal = READING.has(request.method) ? null : crossSiteRefusal(request, requestedHost(request));
      if (refusal === null) return next();
      deps.log.warn(`dashboard: ${request.method} ${request.originalUrl} was refused: ${refusal}`);
      return void response.status(403).json({ error: refusal });
    }
    const verdict = bearerVerdict(request);
    if (verdict.kind === 'right') return next();
    if (verdict.kind === 'wait') return void response.status(429).set('retry-after', String(verdict.seconds)).json({ error: waitSentence(verdict.seconds) });
    if (verdict.kind === 'wrong') return void response.status(401).json({ error: 'That bearer token is not the dashboard token.' });
    if (READING.has(request.method) && sessionOf(request, response)) return next();
    response.status(401).json({ error: 'Sign in, or send Authorization: Bearer <the dashboard token>.' });
  });
  api.get('/jobs', json(async () => (await deps.jobs.list()).jobs.map(recordOfJob)));
  api.post('/jobs', handle(async (request, response) => void response.status(201).json(recordOfJob(await deps.jobs.create(createJobBody(request.body))))));
  api.get('/jobs/:job', json(async (request) => {
    const shown = await deps.jobs.show(param(request, 'job'));
    return { ...recordOfJob(shown.job), next_runs: shown.nextRuns.map((at) => at.toISOString()) };
  }));
  api.patch('/jobs/:job', json(async (request) => {
    const { job } = await deps.jobs.show(param(request, 'job'));
    return recordOfJob(await deps.jobs.edit(editJobBody(job.id, request.body)));
  }));
  api.delete('/jobs/:job', json(async (request) => recordOfJob(await deps.jobs.remove(param(request, 'job')))));
  api.get('/runs', json(async (request) => {
    const job = typeof request.query.job === 'string' ? request.query.job : undefined;
    return deps.runs.list(job ? { kind: 'cron', subject: job, limit: RUNS_SHOWN } : { limit: RUNS_SHOWN });
  }));
  api.get('/runs/:id', json(async (request) => (await deps.runs.get(param(request, 'id'))) ?? notFound(`No run has the id ${param(request, 'id')}.`)));
  api.post('/jobs/:job/pause', json(async (request) => recordOfJob(await deps.jobs.pause(param(request, 'job'), reasonOf(request)))));
  api.post('/jobs/:job/resume', json(async (request) => recordOfJob(await deps.jobs.resume(param(request, 'job')))));
  api.post('/jobs/:job/run', json(async (request) => {
    const started = await deps.jobs.runNow(param(request, 'job'));
    void started.finished.catch((error: unknown) => deps.log.error(`dashboard: the run of job '${started.job.name}' failed unexpectedly: ${errorText(error)}`));
    return recordOfJob(started.job);
  }));
  api.post('/webhooks/:name/test', json(async (request) => {
    const sent = await deps.webhooks.sendTest(param(request, 'name'));
    const verdict = listenerVerdict(sent.status, sent.body);
    return { status: sent.status, body: sent.body, outcome: verdict.kind, said: testEventSentence(verdict, await routeEvents(param(request, 'name'))) };
  }));
  api.use((request, response) => {
    response.status(404).json({ error: `The dashboard API has no ${request.method} ${request.baseUrl}${request.path}; docs/dashboard.md lists what it has.` });
  });
  app.use('/api', express.json({ limit: '64kb' }), api);

  /** The event kinds a route takes (empty: any, or the route is not listed). */
  const routeEvents = async (name: string): Promise<readonly string[]> => {
    try {
      return (await deps.webhooks.listing()).routes.find((route) => route.name === name)?.events ?? [];
    } catch {
      return [];
    }
  };

  // Every page below needs a session, or the Bearer token; a change with a session needs its CSRF token too.
  app.use((request, response, next) => {
    const verdict = bearerVerdict(request);
    if (verdict.kind === 'right') {
      response.locals.session = DashboardSessions.forOneRequest();
      return next();
    }
    if (verdict.kind === 'wait') return void response.status(429).set('retry-after', String(verdict.seconds)).type('text').send(waitSentence(verdict.seconds));
    const session = sessionOf(request, response);
    if (!session) {
      if (request.method === 'GET' && (request.path === '/' || request.accepts('html'))) {
        response.status(deps.token !== null && request.path === '/' ? 200 : 401).type('html').send(signInPage(null).text);
      } else response.status(401).type('text').send('Sign in first.');
      return;
    }
    if (!READING.has(request.method) && !DashboardSessions.csrfMatches(session, request.body?.csrf)) {
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
    sessions.close(cookieValue(request.headers.cookie, cookieName(request)));
    response.setHeader('set-cookie', `${cookieName(request)}=; ${cookieAttributes(request)}; Max-Age=0`);
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

  /**
   * A job and its runs as they stand together: the ledger is read first, then the job. A run's
   * end is written on the job before the ledger records it, so a run the ledger shows ended is
   * ended on the job read after it (its state and last status are the run's).
   */
  const jobWithRuns = async (ref: string) => {
    const { job } = await deps.jobs.show(ref);
    const runs = await deps.runs.list({ kind: 'cron', subject: job.id, limit: RUNS_SHOWN });
    const shown = await deps.jobs.show(job.id);
    return { job: shown.job, nextRuns: shown.nextRuns, runs, timeZone: shown.timeZone };
  };
  app.get('/jobs/:job', handle(async (request, response) => {
    page(response, jobPage(context(response, said(request)), await jobWithRuns(param(request, 'job'))));
  }));
  // The part of a job's page that changes as it runs (state, last status, next runs, run history), for its live refresh.
  app.get('/fragments/jobs/:job', handle(async (request, response) => {
    page(response, jobLive(context(response), await jobWithRuns(param(request, 'job'))));
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
      // An event the route ignored ran nothing: that is said as a problem, with the reason.
      const verdict = listenerVerdict(sent.status, sent.body);
      const sentence = testEventSentence(verdict, await routeEvents(name));
      response.redirect(303, `/webhooks?${verdict.kind === 'accepted' ? 'done' : 'problem'}=${encodeURIComponent(sentence)}`);
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
    const isApi = isApiRequest(request);
    const clientStatus = bodyRefusal(error);
    if (clientStatus !== null) {
      const sentence = clientStatus === 413 ? 'The request body is larger than the dashboard takes (64 kB).' : 'The request body cannot be read (for the API: send JSON with Content-Type: application/json).';
      if (isApi) return void response.status(clientStatus).json({ error: sentence });
      return void response.status(clientStatus).type('text').send(sentence);
    }
    if (error instanceof AppError) {
      const status = error instanceof InvalidInputError ? 400 : /NOT_FOUND|AMBIGUOUS/.test(error.code) ? 404 : 409;
      if (isApi) return void response.status(status).json({ error: error.message });
      if (response.locals.session) return page(response, notFoundPage(context(response), error.message), status);
      return void response.status(status).type('text').send(error.message);
    }
    deps.log.error(`dashboard: ${request.method} ${request.path} failed: ${errorText(error)}`);
    response.status(500).type('text').send('Something went wrong; the gateway log says what.');
  });
  return app;
}

/** Whether the request is one for the JSON API (answered in JSON). */
function isApiRequest(request: Request): boolean {
  return request.path.startsWith('/api/') || request.path === '/api' || request.baseUrl === '/api';
}

/**
 * Why a change to a tokenless dashboard is refused when a web page of another site in a browser
 * sent it, or null (a page of a name that resolves to this machine, DNS rebinding, was refused
 * already for its Host). Scripts and the dashboard's own pages are answered.
 */
function crossSiteRefusal(request: Request, host: string | undefined): string | null {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  if ((typeof site === 'string' && site !== 'same-origin' && site !== 'none') || (origin !== undefined && origin !== `${request.protocol}://${host}`)) {
    return 'A web page of another site may not change jobs on this dashboard; set a dashboard token to use the API from a browser.';
  }
  return null;
}

/** The status of a request body the parsers refused (413 too large, 400 unreadable), or null. */
function bodyRefusal(error: unknown): number | null {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') return 413;
  if (typeof type === 'string' && type.startsWith('entity.') || type === 'encoding.unsupported' || type === 'charset.unsupported') return 400;
  return null;
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
