import request from 'supertest';
import { createDashboardApp } from '../../src/adapters/dashboard/dashboardApp.js';
import type { DashboardDependencies } from '../../src/adapters/dashboard/dashboardDependencies.js';
import { SummariseRuns } from '../../src/application/runs/SummariseRuns.js';
import type { HomeStatus } from '../../src/application/status/ShowStatus.js';
import { cronHarness } from './cronHarness.js';

export const DASHBOARD_TOKEN = 'dashboard-secret-token';
const STATUS: HomeStatus = {
  gateway: { state: 'stopped' },
  replicas: null,
  nextJobs: [],
  failedJobs: [],
  pausedJobs: [],
  webhookEventsWaiting: 0,
  unreadableJobs: 0,
};

/** A dashboard over the cron harness's use cases (its clock and log too), with `options` over the defaults. */
export function dashboardHarness(
  token: string | null = DASHBOARD_TOKEN,
  options: { webhooks?: Partial<DashboardDependencies['webhooks']>; platforms?: string[] } & Partial<
    Pick<DashboardDependencies, 'allowedHosts' | 'trustProxy' | 'live'>
  > = {},
) {
  const h = cronHarness(options.platforms ? { platforms: options.platforms } : {});
  const app = createDashboardApp({
    token,
    allowedHosts: options.allowedHosts,
    trustProxy: options.trustProxy,
    clock: h.clock,
    timeZone: 'UTC',
    log: h.log,
    jobs: {
      list: () => h.listJobs.execute(),
      show: (job) => h.showJob.execute({ job }),
      create: (input) => h.createJob.execute(input),
      edit: (input) => h.editJob.execute(input),
      pause: (job, reason) => h.pauseJob.execute({ job, reason }),
      resume: (job) => h.resumeJob.execute({ job }),
      cancel: (job) => h.cancelJobRun.execute({ job, by: 'dashboard' }),
      remove: (job) => h.removeJob.execute({ job }),
      runNow: (job) => h.runJobNow.start({ job }),
    },
    runs: h.ledger,
    runSummary: () => new SummariseRuns(h.ledger, h.clock).execute({ timeZone: 'UTC' }),
    runActions: {
      retry: (job, rerunOf) => h.runJobNow.start({ job, requested: { by: 'dashboard', rerun_of: rerunOf } }),
      redeliverCron: (job, run) => h.redeliverJobRun.execute({ job, run, by: 'dashboard' }),
      redeliverWebhook: async () => {
        throw new Error('no webhook runs in this harness');
      },
    },
    ...(options.live ? { live: options.live } : {}),
    status: async () => STATUS,
    webhooks: {
      listing: async () => ({ routes: [], unusable: [], subscriptionProblems: [], storeProblem: null }),
      runs: async () => [],
      sendTest: async () => ({ status: 202, body: '' }),
      subscribe: async () => {
        throw new Error('no subscriptions in this harness');
      },
      remove: async () => {
        throw new Error('no subscriptions in this harness');
      },
      urlOf: (name) => `http://127.0.0.1:8644/webhooks/${name}`,
      ...options.webhooks,
    },
  });
  return { h, app };
}

/** Signs in; returns the session cookie and the CSRF token of the page at `path`. */
export async function signInTo(app: ReturnType<typeof dashboardHarness>['app'], path = '/jobs/new') {
  const signedIn = await request(app).post('/sign-in').type('form').send({ token: DASHBOARD_TOKEN });
  const cookie = signedIn.headers['set-cookie']![0]!.split(';')[0]!;
  const page = await request(app).get(path).set('cookie', cookie);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
  return { cookie, csrf: csrf!, signedIn };
}
