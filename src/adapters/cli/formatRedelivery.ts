import type { RedeliverJobRunOutput } from '../../application/cron/RedeliverJobRun.js';
import type { RedeliverWebhookRunOutput } from '../../application/webhook/RedeliverWebhookRun.js';
import type { RunDelivery } from '../../domain/runs/RunRecord.js';

/** How the answer went to one target this time: `telegram:-100123: delivered (messages 7, 8)`. */
function deliveryLine(delivery: RunDelivery): string {
  switch (delivery.outcome) {
    case 'delivered': {
      const ids = delivery.message_ids;
      return `${delivery.target}: delivered${ids.length === 0 ? '' : ` (message${ids.length === 1 ? '' : 's'} ${ids.join(', ')})`}`;
    }
    case 'queued':
      return `${delivery.target}: queued (receipt ${delivery.message_ids.join(', ')})`;
    case 'failed':
      return `${delivery.target}: failed: ${delivery.error ?? 'not delivered'}`;
  }
}

/** What `agent cron redeliver` prints: the run and how it stands now, then one line per target it was sent to. */
export function jobRedeliveryLines({ job, run, sent, outcome, lastRun }: RedeliverJobRunOutput): string[] {
  const lines = [`Delivered the answer of run ${run.id} of job ${job.id} '${job.name}' again: ${outcome.status}.`];
  lines.push(...sent.map((delivery) => `  ${deliveryLine(delivery)}`));
  if (!lastRun) lines.push("It is not the job's last run: the job's last_status is unchanged.");
  return lines;
}

/**
 * What `agent webhook redeliver` prints: where the answer went, or why it did not get there; an
 * answer delivered to the log is printed too, after the line saying which log holds it.
 */
export function webhookRedeliveryLines({ run, report, deliveredTo, answer, loggedTo }: RedeliverWebhookRunOutput): string[] {
  const about = `webhook run ${run.id} (route '${run.subject}')`;
  if (report.status !== 'delivered') return [`The answer of ${about} was not delivered again: ${report.error ?? 'the delivery failed'}`];
  if (loggedTo === null) return [`Delivered the answer of ${about} again to ${deliveredTo}.`];
  return [`Delivered the answer of ${about} again to the log: it is in ${loggedTo}. The answer:`, answer];
}
