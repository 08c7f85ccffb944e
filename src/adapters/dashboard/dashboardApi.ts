/**
 * The dashboard's JSON API under /api: the jobs, their runs and a webhook route's test event, for
 * scripts with the token and for the scripts of a signed-in page.
 */
import express, { type Request } from 'express';
import { AppError, errorText } from '../../domain/errors.js';
import { recordOfJob } from '../../domain/JobRecord.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { listenerVerdict, testEventSentence } from '../../domain/webhook/listenerAnswer.js';
import { createJobBody, editJobBody } from './apiBodies.js';
import { READING, type DashboardAccess } from './dashboardAccess.js';
import type { DashboardDependencies } from './dashboardDependencies.js';
import { handle, param, reasonOf, routeEvents, RUNS_SHOWN } from './routeHelpers.js';

/** The API's router, to be mounted at /api behind the JSON body parser. */
export function dashboardApi(deps: DashboardDependencies, access: DashboardAccess): express.Router {
  const { requestedHost, bearerVerdict, waitSentence, sessionOf } = access;
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
    if (verdict.kind === 'wait')
      return void response
        .status(429)
        .set('retry-after', String(verdict.seconds))
        .json({ error: waitSentence(verdict.seconds) });
    if (verdict.kind === 'wrong') return void response.status(401).json({ error: 'That bearer token is not the dashboard token.' });
    if (READING.has(request.method) && sessionOf(request, response)) return next();
    response.status(401).json({ error: 'Sign in, or send Authorization: Bearer <the dashboard token>.' });
  });
  api.get(
    '/jobs',
    json(async () => (await deps.jobs.list()).jobs.map(recordOfJob)),
  );
  api.post(
    '/jobs',
    handle(async (request, response) => void response.status(201).json(recordOfJob(await deps.jobs.create(createJobBody(request.body))))),
  );
  api.get(
    '/jobs/:job',
    json(async (request) => {
      const shown = await deps.jobs.show(param(request, 'job'));
      return { ...recordOfJob(shown.job), next_runs: shown.nextRuns.map((at) => at.toISOString()) };
    }),
  );
  api.patch(
    '/jobs/:job',
    json(async (request) => {
      const { job } = await deps.jobs.show(param(request, 'job'));
      return recordOfJob(await deps.jobs.edit(editJobBody(job.id, request.body)));
    }),
  );
  api.delete(
    '/jobs/:job',
    json(async (request) => recordOfJob(await deps.jobs.remove(param(request, 'job')))),
  );
  api.get(
    '/runs',
    json(async (request) => {
      const job = typeof request.query.job === 'string' ? request.query.job : undefined;
      return deps.runs.list(job ? { kind: 'cron', subject: job, limit: RUNS_SHOWN } : { limit: RUNS_SHOWN });
    }),
  );
  api.get(
    '/runs/:id',
    json(async (request) => {
      const run = await deps.runs.get(param(request, 'id'));
      // As `agent runs show --json` prints it: the record with its transcript.
      return run ? { ...run, transcript: await deps.runs.transcriptOf(run.id) } : notFound(`No run has the id ${param(request, 'id')}.`);
    }),
  );
  api.post(
    '/jobs/:job/pause',
    json(async (request) => recordOfJob(await deps.jobs.pause(param(request, 'job'), reasonOf(request)))),
  );
  api.post(
    '/jobs/:job/resume',
    json(async (request) => recordOfJob(await deps.jobs.resume(param(request, 'job')))),
  );
  api.post(
    '/jobs/:job/cancel',
    json(async (request) => recordOfJob(await deps.jobs.cancel(param(request, 'job')))),
  );
  api.post(
    '/jobs/:job/run',
    json(async (request) => {
      const started = await deps.jobs.runNow(param(request, 'job'));
      void started.finished.catch((error: unknown) =>
        deps.log.error(`dashboard: the run of job '${started.job.name}' failed unexpectedly: ${errorText(error)}`),
      );
      return recordOfJob(started.job);
    }),
  );
  api.post(
    '/webhooks/:name/test',
    json(async (request) => {
      const sent = await deps.webhooks.sendTest(param(request, 'name'));
      const verdict = listenerVerdict(sent.status, sent.body);
      return {
        status: sent.status,
        body: sent.body,
        outcome: verdict.kind,
        said: testEventSentence(verdict, await routeEvents(deps.webhooks, param(request, 'name'))),
      };
    }),
  );
  api.use((request, response) => {
    response.status(404).json({
      error: `The dashboard API has no ${request.method} ${request.baseUrl}${request.path}; docs/dashboard.md lists what it has.`,
    });
  });
  return api;
}

/**
 * Why a change to a tokenless dashboard is refused when a web page of another site in a browser
 * sent it, or null (a page of a name that resolves to this machine, DNS rebinding, was refused
 * already for its Host). Scripts and the dashboard's own pages are answered.
 */
function crossSiteRefusal(request: Request, host: string | undefined): string | null {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  if (
    (typeof site === 'string' && site !== 'same-origin' && site !== 'none') ||
    (origin !== undefined && origin !== `${request.protocol}://${host}`)
  ) {
    return 'A web page of another site may not change jobs on this dashboard; set a dashboard token to use the API from a browser.';
  }
  return null;
}

/** An API route answering what `produce` returns, as JSON. */
function json(produce: (request: Request) => Promise<unknown>) {
  return handle(async (request, response) => void response.json(await produce(request)));
}

function notFound(message: string): never {
  throw new AppError(ERROR_CODES.DASHBOARD.RUN_NOT_FOUND, message);
}
