import type { CatchUp } from '../../domain/Job.js';
import type { RetryPolicy } from '../../domain/retries.js';
import type { ModelSelection } from './AgentRunner.js';

/** The part of the validated configuration the cron use cases need. */
export interface CronSettings {
  /** IANA zone in which cron expressions and naive times are read. */
  timeZone: string;
  wrapResponse: boolean;
  maxParallelJobs: number;
  outputRetention: number;
  /** Agent idle budget; null = unlimited. */
  idleTimeoutMs: number | null;
  scriptTimeoutMs: number;
  /** The configured default model, used when a job names none. */
  defaultModel: ModelSelection;
  /** `cron.one_shot_grace_seconds` (ms): how late a one-shot may run, how far past a new one's time may be; 120 s when absent. */
  oneShotGraceMs?: number;
  /** `cron.failure_alerts`: `first` when absent. */
  failureAlerts?: 'first' | 'every' | 'off';
  /** `cron.pause_after_failures`: 0 (never) when absent. */
  pauseAfterFailures?: number;
  /** `cron.catch_up`: what an overdue slot of a recurring job does, unless the job says; `once` when absent. */
  catchUp?: CatchUp;
  /** `cron.retry`: how a job that sets none retries a run that failed for a reason that may pass; none when absent. */
  retry?: RetryPolicy | null;
  /**
   * The enabled servers of `mcp_servers`, in file order: a job's toolsets may name them as
   * `mcp:<server>` or `mcp:<server>:<tool>` (domain/toolsets.ts `toolsetProblem`). None when absent.
   */
  mcpServers?: readonly string[];
  /**
   * How far ahead of their slots the gateway claims due jobs (ms): their runs get ready meanwhile
   * (record, checks) and start at their slots, so a thousand due at one instant all start on
   * time (docs/gateway.md). 0 (claimed once due) when absent.
   */
  claimAheadMs?: number;
  /** `agent.budget.max_cost_per_day`: what every run of the last 24 h may cost together (US dollars); none when absent. */
  maxCostPerDay?: number | null;
}

/** What the webhook worker reads from configuration and environment. */
export interface WebhookWorkerSettings {
  /** `platforms.webhook.extra.max_concurrent_runs`, default 4. */
  maxConcurrentRuns: number;
  /**
   * `platforms.webhook.extra.max_concurrent_deliveries`, default 2: deliveries under way at once
   * to one platform (or to the code host, or the log); each platform has its own.
   */
  maxConcurrentDeliveries: number;
  /** Agent idle budget (`AGENT_CRON_TIMEOUT`, as for cron runs); null = unlimited. */
  idleTimeoutMs: number | null;
  /** The configured default model: routes name none. */
  defaultModel: ModelSelection;
  /** How often the inbox is looked at between notifications of new events. */
  pollIntervalMs: number;
  /** `agent.budget.max_cost_per_day`; none when absent. */
  maxCostPerDay?: number | null;
}

/** Where everything lives under `$AGENT_HOME` (absolute paths). */
export interface AgentPaths {
  home: string;
  configFile: string;
  cronDir: string;
  jobsFile: string;
  tickLockFile: string;
  outputDir: string;
  scriptsDir: string;
  skillsDir: string;
  memoriesDir: string;
  /** `webhooks/`: the listener's durable state. */
  webhooksDir: string;
  /** `webhooks/inbox/`: accepted events until their run finished. */
  webhookInboxDir: string;
  /** `webhook_subscriptions.json`: dynamic subscriptions by name. */
  webhookSubscriptionsFile: string;
  /** `channel_directory.json`: the channels each chat platform listed at the last refresh. */
  channelDirectoryFile: string;
  /** `runs/`: the run ledger, one file per run under `<kind>/<job id or route>/`. */
  runsDir: string;
}
