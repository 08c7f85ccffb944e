import { createServer } from 'node:http';
import type { Container } from 'inversify';
import { CancelJobRun } from '../../application/cron/CancelJobRun.js';
import { RedeliverJobRun } from '../../application/cron/RedeliverJobRun.js';
import { RedeliverWebhookRun } from '../../application/webhook/RedeliverWebhookRun.js';
import { DASHBOARD_ACTOR } from '../../adapters/dashboard/runActions.js';
import { CreateJob } from '../../application/cron/CreateJob.js';
import { EditJob } from '../../application/cron/EditJob.js';
import { ListJobs } from '../../application/cron/ListJobs.js';
import { PauseJob } from '../../application/cron/PauseJob.js';
import { RemoveJob } from '../../application/cron/RemoveJob.js';
import { ResumeJob } from '../../application/cron/ResumeJob.js';
import { RunJobNow } from '../../application/cron/RunJobNow.js';
import { ShowJob } from '../../application/cron/ShowJob.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { CronSettings } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { SummariseRuns } from '../../application/runs/SummariseRuns.js';
import { ShowStatus } from '../../application/status/ShowStatus.js';
import { ListWebhookRuns } from '../../application/webhook/ListWebhookRuns.js';
import { ListWebhooks } from '../../application/webhook/subscriptions/ListWebhooks.js';
import { RemoveWebhookSubscription } from '../../application/webhook/subscriptions/RemoveWebhookSubscription.js';
import { SubscribeWebhook } from '../../application/webhook/subscriptions/SubscribeWebhook.js';
import { TestWebhookSubscription } from '../../application/webhook/subscriptions/TestWebhookSubscription.js';
import type { DashboardSettings } from '../../adapters/config/dashboardSettings.js';
import { createDashboardApp } from '../../adapters/dashboard/dashboardApp.js';
import { defaultAllowedHosts } from '../../adapters/dashboard/hosts.js';
import { listenOrExplain } from './webhookListener.js';

export interface RunningDashboard {
  /** The line the gateway prints once it listens. */
  listeningLine: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Serves the dashboard on its own listener (`dashboard.host`, `dashboard.port`), over the use
 * cases of `container`, the gateway's: a job changed there is a job changed by the gateway, and
 * its trigger hears of it. Loaded only by a gateway whose dashboard is on.
 */
export async function startDashboard(
  container: Container,
  settings: DashboardSettings,
  cron: CronSettings,
  logger: Logger,
  configFile: string,
  /** The gateway's watch of the job store, for the live pages (docs/dashboard.md, Live). */
  watchJobs?: (onChange: () => void) => () => void,
): Promise<RunningDashboard> {
  const runJobNow = container.get(RunJobNow);
  const summariseRuns = new SummariseRuns(container.get(TOKENS.RunLedger), container.get(TOKENS.Clock));
  const app = createDashboardApp({
    token: settings.token,
    allowedHosts: settings.allowedHosts ?? defaultAllowedHosts(settings.host),
    trustProxy: settings.trustProxy,
    clock: container.get(TOKENS.Clock),
    timeZone: cron.timeZone,
    log: logger,
    jobs: {
      list: () => container.get(ListJobs).execute(),
      show: (job) => container.get(ShowJob).execute({ job }),
      create: (input) => container.get(CreateJob).execute(input),
      edit: (input) => container.get(EditJob).execute(input),
      pause: (job, reason) => container.get(PauseJob).execute({ job, reason }),
      resume: (job) => container.get(ResumeJob).execute({ job }),
      cancel: (job) => container.get(CancelJobRun).execute({ job, by: DASHBOARD_ACTOR }),
      remove: (job) => container.get(RemoveJob).execute({ job }),
      runNow: (job) => runJobNow.start({ job }),
    },
    runs: container.get(TOKENS.RunLedger),
    runSummary: () => summariseRuns.execute({ timeZone: cron.timeZone }),
    runActions: {
      retry: (job, rerunOf) => runJobNow.start({ job, requested: { by: DASHBOARD_ACTOR, rerun_of: rerunOf } }),
      redeliverCron: (job, run) => container.get(RedeliverJobRun).execute({ job, run, by: DASHBOARD_ACTOR }),
      redeliverWebhook: (run) => container.get(RedeliverWebhookRun).execute({ run, by: DASHBOARD_ACTOR }),
    },
    ...(watchJobs ? { live: { watchJobs } } : {}),
    status: () => container.get(ShowStatus).execute(),
    webhooks: {
      listing: () => container.get(ListWebhooks).execute(),
      runs: (limit) => container.get(ListWebhookRuns).execute({ limit }),
      sendTest: (name) => container.get(TestWebhookSubscription).execute({ name, payload: null, event: null }),
      subscribe: (input) => container.get(SubscribeWebhook).execute(input),
      remove: (name) => container.get(RemoveWebhookSubscription).execute({ name }),
      urlOf: (name) => container.get(TOKENS.LocalWebhookClient).urlOf(name),
    },
  });
  const server = createServer(app);
  const port = await listenOrExplain(server, settings.host, settings.port, configFile, 'The dashboard', 'dashboard');
  const shown = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  return {
    listeningLine: `dashboard listening on http://${shown}:${port}/`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
