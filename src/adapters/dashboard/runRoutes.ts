/**
 * The dashboard's run pages (docs/dashboard.md, Runs and Live): the run list with its filters and
 * pages, a run's page and its actions (each confirmed on a page of its own, then posted with the
 * session's CSRF token like every change), and the live stream the pages follow.
 */
import type { Express, Request, Response } from 'express';
import { AppError, errorText } from '../../domain/errors.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import type { DashboardDependencies } from './dashboardDependencies.js';
import { pageResponses } from './dashboardPages.js';
import { LiveChanges, type Repeat } from './liveChanges.js';
import { liveStream } from './liveStream.js';
import { handle, param } from './routeHelpers.js';
import { filterValuesOf, searchOf } from './runFilters.js';
import { actionsOf, notNowSentence, runActionPage, runLive, runPage, type RunAction } from './runPageView.js';
import { runListPage, runListPart, type RunListView } from './runsListView.js';
import { notFoundPage } from './views.js';

/** The live stream's settings beyond the ledger and the jobs it looks at. */
export interface LiveOptions {
  /** Calls back when the job store may have changed (the gateway's watch of it); returns the unwatch. */
  watchJobs?: (onChange: () => void) => () => void;
  /** Streams open at once at most (32). */
  maxStreams?: number;
  /** The timers of the stream (tests give their own). */
  repeat?: Repeat;
}

const ACTIONS: readonly RunAction[] = ['cancel', 'retry', 'redeliver'];

export function registerRunRoutes(app: Express, deps: DashboardDependencies): LiveChanges {
  const { context, page, said } = pageResponses(deps);
  const clock = deps.clock ?? { now: () => new Date() };
  const live = new LiveChanges(
    { runs: deps.runs, jobs: () => deps.jobs.list(), ...(deps.live?.watchJobs ? { watchJobs: deps.live.watchJobs } : {}) },
    clock,
    deps.live?.repeat,
    (error) => deps.log.debug(`dashboard: the live updates could not look at the stores: ${errorText(error)}`),
  );

  /** The list's view of a request, or the sentence saying what is wrong with its filters. */
  const listView = async (request: Request): Promise<{ view: RunListView; problem: string | null }> => {
    const values = filterValuesOf(request);
    const [snapshot, routes] = await Promise.all([
      deps.jobs.list(),
      deps.webhooks
        .listing()
        .then((listing) => listing.routes.map((route) => route.name))
        .catch(() => [] as string[]),
    ]);
    const jobs = snapshot.jobs.map((job) => ({ id: job.id, name: job.name })).sort((a, b) => a.name.localeCompare(b.name));
    const asked = searchOf(values, deps.timeZone);
    const found = asked.search ? await deps.runs.search(asked.search) : { runs: [], next: null };
    return { view: { values, jobs, routes, ...found }, problem: asked.problem };
  };

  app.get(
    '/runs',
    handle(async (request, response) => {
      const { view, problem } = await listView(request);
      const shown = said(request);
      page(
        response,
        runListPage(context(response, { ...shown, problem: problem ?? shown.problem }), view, clock.now()),
        problem ? 400 : 200,
      );
    }),
  );
  app.get(
    '/fragments/runs-list',
    handle(async (request, response) => {
      const { view } = await listView(request);
      page(response, runListPart(view, deps.timeZone));
    }),
  );

  /** The run of the request's `:id`, or null once a 404 page said there is none. */
  const runOf = async (request: Request, response: Response): Promise<RunRecord | null> => {
    const run = await deps.runs.get(param(request, 'id'));
    if (run === null) {
      const sentence = `No run has the id ${param(request, 'id')}; it may be older than the run ledger keeps.`;
      if (request.path.startsWith('/fragments/')) response.status(404).type('text').send(sentence);
      else page(response, notFoundPage(context(response), sentence), 404);
    }
    return run;
  };
  app.get(
    '/runs/:id',
    handle(async (request, response) => {
      const run = await runOf(request, response);
      if (run) page(response, runPage(context(response, said(request)), run, await deps.runs.transcriptOf(run.id), clock.now()));
    }),
  );
  app.get(
    '/fragments/runs/:id',
    handle(async (request, response) => {
      const run = await runOf(request, response);
      if (run) page(response, runLive(context(response), run, await deps.runs.transcriptOf(run.id)));
    }),
  );

  for (const action of ACTIONS) {
    app.get(
      `/runs/:id/${action}`,
      handle(async (request, response) => {
        const run = await runOf(request, response);
        if (run) page(response, runActionPage(context(response), run, action), actionsOf(run).includes(action) ? 200 : 409);
      }),
    );
    app.post(
      `/runs/:id/${action}`,
      handle(async (request, response) => {
        const run = await runOf(request, response);
        if (run === null) return;
        const back = (kind: 'done' | 'problem', sentence: string, to = `/runs/${encodeURIComponent(run.id)}`) =>
          response.redirect(303, `${to}${to.includes('?') ? '&' : '?'}${kind}=${encodeURIComponent(sentence)}`);
        if (request.body?.confirm !== 'yes') return void response.redirect(303, `/runs/${encodeURIComponent(run.id)}/${action}`);
        if (!actionsOf(run).includes(action)) return back('problem', notNowSentence(action, run));
        try {
          back(...(await act(action, run)));
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          back('problem', error.message);
        }
      }),
    );
  }

  /** Does `action` to `run`: what to say, and where (its page unless said). */
  const act = async (action: RunAction, run: RunRecord): Promise<['done' | 'problem', string, string?]> => {
    if (action === 'cancel') {
      await deps.jobs.cancel(run.subject);
      return ['done', 'Asked the run to stop; it shows as cancelled once it has.'];
    }
    const actions = deps.runActions;
    if (!actions) return ['problem', 'This dashboard cannot do that.'];
    if (action === 'retry') {
      const started = await actions.retry(run.subject, run.id);
      void started.finished.catch((error: unknown) =>
        deps.log.error(`dashboard: the run of job '${started.job.name}' failed unexpectedly: ${errorText(error)}`),
      );
      return [
        'done',
        `Job ${started.job.name} runs again; the new run shows at the top as it goes.`,
        `/runs?job=${encodeURIComponent(run.subject)}`,
      ];
    }
    if (run.kind === 'cron') {
      const { outcome } = await actions.redeliverCron(run.subject, run.id);
      return outcome.status === 'delivery_failed'
        ? ['problem', `The answer was sent again, and failed: ${outcome.deliveryError}`]
        : ['done', `The answer was delivered again (${outcome.status}).`];
    }
    const { run: after, deliveredTo } = await actions.redeliverWebhook(run.id);
    return after.status === 'delivery_failed'
      ? ['problem', `The answer was sent again to ${deliveredTo}, and failed: ${after.error ?? 'no reason given'}`]
      : ['done', `The answer was delivered again to ${deliveredTo}.`];
  };

  app.get('/events', handle(liveStream(live, deps.live ?? {})));
  return live;
}
