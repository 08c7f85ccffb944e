/** The overview's routes: the page, and its live parts served alone (overviewPage.ts). */
import type { Express } from 'express';
import { upcomingRuns } from '../../domain/jobDetails.js';
import type { DashboardDependencies } from './dashboardDependencies.js';
import { pageResponses } from './dashboardPages.js';
import { overviewCounts, overviewNow, overviewPage, type OverviewNow } from './overviewPage.js';
import { handle, RUNS_SHOWN } from './routeHelpers.js';
import { runsTable } from './views.js';

/** How many next runs the overview lists. */
const NEXT_RUNS_SHOWN = 10;

export function registerOverview(app: Express, deps: DashboardDependencies): void {
  const { context, page, said } = pageResponses(deps);

  /** What the live parts show now, and the summary of the ledger they count the runs of the last 24 hours from. */
  const now = async () => {
    const [status, snapshot, summary] = await Promise.all([deps.status(), deps.jobs.list(), deps.runSummary()]);
    const nextRuns = snapshot.jobs
      .filter((job) => job.state === 'scheduled')
      .flatMap((job) => upcomingRuns(job, NEXT_RUNS_SHOWN, deps.timeZone).map((at) => ({ job, at })))
      .sort((a, b) => a.at.getTime() - b.at.getTime())
      .slice(0, NEXT_RUNS_SHOWN);
    const view: OverviewNow = { status, jobs: snapshot.jobs, nextRuns, last24h: summary.last24h };
    return { view, summary };
  };

  app.get(
    '/',
    handle(async (request, response) => {
      const [{ view, summary }, latest] = await Promise.all([now(), deps.runs.list({ limit: RUNS_SHOWN })]);
      page(response, overviewPage(context(response, said(request)), { ...view, summary, latest }));
    }),
  );
  app.get(
    '/fragments/overview/counts',
    handle(async (_request, response) => page(response, overviewCounts((await now()).view))),
  );
  app.get(
    '/fragments/overview/now',
    handle(async (_request, response) => page(response, overviewNow(context(response), (await now()).view))),
  );
  app.get(
    '/fragments/runs',
    handle(async (_request, response) => {
      page(response, runsTable(await deps.runs.list({ limit: RUNS_SHOWN }), deps.timeZone));
    }),
  );
}
