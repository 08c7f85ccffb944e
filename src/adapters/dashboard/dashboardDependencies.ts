/** What the dashboard is built from: its settings and the use cases it acts through. */
import type { CreateJobInput } from '../../application/cron/CreateJob.js';
import type { EditJobInput } from '../../application/cron/EditJob.js';
import type { RunJobNowOutput } from '../../application/cron/RunJobNow.js';
import type { ShowJobOutput } from '../../application/cron/ShowJob.js';
import type { Clock } from '../../application/ports/Clock.js';
import type { JobSnapshot } from '../../application/ports/JobRepository.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { RunLedger } from '../../application/ports/RunLedger.js';
import type { RunSummary } from '../../application/runs/SummariseRuns.js';
import type { WebhookRouteListing } from '../../application/ports/WebhookRoutes.js';
import type { HomeStatus } from '../../application/status/ShowStatus.js';
import type { ListedWebhookRun } from '../../application/webhook/ListWebhookRuns.js';
import type { SubscribeWebhookInput, SubscribeWebhookResult } from '../../application/webhook/subscriptions/SubscribeWebhook.js';
import type { WebhookSubscription } from '../../domain/webhook/WebhookSubscription.js';
import type { Job } from '../../domain/Job.js';
import type { RunActions } from './runActions.js';
import type { LiveOptions } from './runRoutes.js';

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
    /** Asks for the run under way of the job to stop, wherever it runs; refused when none is under way. */
    cancel(job: string): Promise<Job>;
    remove(job: string): Promise<Job>;
    /** Starts a run now; resolves once it started. */
    runNow(job: string): Promise<{ job: Job; finished: Promise<RunJobNowOutput> }>;
  };
  runs: RunLedger;
  /** The overview's summary of the run ledger now (SummariseRuns, days and hours in `timeZone`). */
  runSummary(): Promise<RunSummary>;
  /** What a run's page can do with it besides cancel (runActions.ts); absent: it offers nothing else. */
  runActions?: RunActions;
  /** The live stream's watch of the job store and its limits (docs/dashboard.md, Live). */
  live?: LiveOptions;
  status(): Promise<HomeStatus>;
  webhooks: {
    listing(): Promise<WebhookRouteListing>;
    runs(limit: number): Promise<ListedWebhookRun[]>;
    sendTest(name: string): Promise<{ status: number; body: string }>;
    /** `agent webhook subscribe`: makes (or replaces) a subscription, its secret generated. */
    subscribe(input: SubscribeWebhookInput): Promise<SubscribeWebhookResult>;
    /** `agent webhook remove`: the removed subscription. */
    remove(name: string): Promise<WebhookSubscription>;
    /** Where a route is reached on this machine's listener. */
    urlOf(name: string): string;
  };
}
