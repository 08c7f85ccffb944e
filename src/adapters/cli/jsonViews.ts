import type { JobRunReport } from '../../application/cron/JobRunReports.js';
import type { RedeliverJobRunOutput } from '../../application/cron/RedeliverJobRun.js';
import type { ChannelList } from '../../application/delivery/ListChannels.js';
import type { SentMessage } from '../../application/delivery/SendMessage.js';
import type { PlatformStatus } from '../../application/ports/Platforms.js';
import type { HomeStatus } from '../../application/status/ShowStatus.js';
import type { RedeliverWebhookRunOutput } from '../../application/webhook/RedeliverWebhookRun.js';
import type { TestWebhookSubscriptionResult } from '../../application/webhook/subscriptions/TestWebhookSubscription.js';
import type { Job } from '../../domain/Job.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import type { ChatReceiverStatus } from '../../domain/chat/chatReceivers.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';

/*
 * What `--json` prints, spelt out key by key: every key in snake_case, as in the job records and
 * the run records, so that a script reads every command's output the same way. The application's
 * own types stay camelCase; only these views cross into output.
 */

/** A gateway's chat receivers, as `agent status --json` shows them. */
function chatReceiversJson(receivers: readonly ChatReceiverStatus[] | undefined) {
  return (receivers ?? []).map((receiver) => ({
    platform: receiver.platform,
    state: receiver.state,
    since: receiver.since,
    error: receiver.error,
  }));
}

/** `agent status --json`. */
export function statusJson(home: string, status: HomeStatus) {
  const { gateway } = status;
  return {
    home,
    gateway:
      gateway.state === 'stopped'
        ? { state: gateway.state }
        : {
            state: gateway.state,
            gateway: {
              pid: gateway.gateway.pid,
              host: gateway.gateway.host,
              started_at: gateway.gateway.startedAt,
              listener: gateway.gateway.listener,
              provider: gateway.gateway.provider,
              chat_receivers: chatReceiversJson(gateway.gateway.chatReceivers),
            },
          },
    replicas:
      status.replicas?.map((replica) => ({
        host: replica.host,
        pid: replica.pid,
        started_at: replica.startedAt,
        listener: replica.listener,
        provider: replica.provider,
        lease_until: replica.leaseUntil.toISOString(),
        chat_receivers: chatReceiversJson(replica.chatReceivers),
      })) ?? null,
    next_jobs: status.nextJobs.map((job) => ({ id: job.id, name: job.name, next_run_at: job.nextRunAt })),
    failed_jobs: status.failedJobs.map((job) => ({
      id: job.id,
      name: job.name,
      last_status: job.lastStatus,
      last_run_at: job.lastRunAt,
      error: job.error,
    })),
    paused_jobs: status.pausedJobs.map((job) => ({ id: job.id, name: job.name, paused_at: job.pausedAt, paused_reason: job.reason })),
    webhook_events_waiting: status.webhookEventsWaiting,
    unreadable_jobs: status.unreadableJobs,
  };
}

/** `agent cron status --json`: what its text shows, the cron part of `agent status --json`. */
export function cronStatusJson(home: string, status: HomeStatus) {
  const { webhook_events_waiting: _webhooks, ...cron } = statusJson(home, status);
  return cron;
}

/** How a run ended: its status, and the error, the delivery's error or the queued receipts that go with it. */
function outcomeJson(outcome: RunOutcome) {
  return {
    status: outcome.status,
    error: outcome.status === 'error' || outcome.status === 'blocked_config' ? outcome.error : null,
    delivery_error: outcome.status === 'delivery_failed' ? outcome.deliveryError : null,
    queued: outcome.status === 'delivery_queued' ? outcome.receipts : outcome.status === 'delivery_failed' ? (outcome.queued ?? []) : [],
  };
}

/** One cron run as `agent cron run --json` and each entry of `agent cron tick --json` show it. */
export function cronRunJson(job: Pick<Job, 'id' | 'name'>, report: JobRunReport) {
  return {
    job_id: job.id,
    job_name: job.name,
    run_id: report.runId ?? null,
    ...outcomeJson(report.outcome),
    answer: report.response,
    answered_by: report.answeredBy,
    output_file: report.outputPath,
    deliveries: report.deliveries ?? [],
    usage: report.usage ?? null,
    cost_usd: report.costUsd ?? null,
    trace_id: report.traceId ?? null,
  };
}

/** `agent cron redeliver --json`: the run, how its answer stands now, and how each target took it this time. */
export function jobRedeliveryJson({ job, run, sent, outcome, lastRun }: RedeliverJobRunOutput) {
  return { job_id: job.id, job_name: job.name, run_id: run.id, ...outcomeJson(outcome), deliveries: sent, last_run: lastRun };
}

/** `agent webhook test --json`: where the event went and what the listener answered. */
export function webhookTestJson(result: TestWebhookSubscriptionResult) {
  return { url: result.url, event: result.event, status: result.status, body: result.body };
}

/** `agent webhook redeliver --json`. */
export function webhookRedeliveryJson({ run, report, deliveredTo }: RedeliverWebhookRunOutput) {
  return {
    run_id: run.id,
    route: run.subject,
    status: report.status,
    error: report.error,
    delivered_to: deliveredTo,
    message_ids: report.messageIds ?? [],
    answer: run.answer,
  };
}

/** `agent send --json`: what each platform confirmed. */
export function sentJson(sent: readonly SentMessage[]) {
  return sent.map(({ target, receipt }) => ({
    target,
    receipt: { platform: receipt.platform, chat_id: receipt.chatId, thread_id: receipt.threadId, message_ids: receipt.messageIds },
  }));
}

/** `agent platforms --json`: never a secret, and not the channel aliases (`agent channels list` shows those). */
export function platformsJson(statuses: readonly PlatformStatus[]) {
  return statuses.map((status) => ({
    platform: status.platform,
    configured: status.configured,
    missing: status.missing.map((setting) => ({ key: setting.key, variable: setting.variable })),
    home_channel: status.homeChannel,
  }));
}

/** `agent channels list --json`. */
export function channelsJson(list: ChannelList) {
  return {
    updated_at: list.updatedAt,
    channels: list.channels.map((channel) => ({ platform: channel.platform, id: channel.id, name: channel.name, source: channel.source })),
  };
}

/** `agent webhook list --json`: a route without its secrets, and the URL it is served at. */
export function webhookRouteJson(route: WebhookRoute, url: string) {
  return {
    name: route.name,
    source: route.source,
    events: route.events,
    prompt: route.prompt,
    skills: route.skills,
    toolsets: route.toolsets,
    allow_private_networks: route.allowPrivateNetworks,
    deliver_only: route.deliverOnly,
    deliver: route.deliver,
    // Keys as config.yaml spells them (chat_id, pr_number …), values the route's templates.
    deliver_extra: route.deliverExtra,
    filters: route.filters.map((filter) => ({ field: filter.field, in: filter.in })),
    content_types: route.contentTypes ?? [],
    timeout_seconds: route.timeoutSeconds ?? null,
    retry: route.retry ?? null,
    coalesce: route.coalesce ? { key: route.coalesce.key, window_ms: route.coalesce.windowMs, mode: route.coalesce.mode } : null,
    url,
  };
}
