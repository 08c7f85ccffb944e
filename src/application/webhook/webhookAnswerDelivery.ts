/**
 * A webhook route's answer, delivered through the run pipeline's AnswerDelivery: where the route
 * sends it (the log, a pull-request comment, a chat platform), an empty answer as a notice, and
 * the outcome as the webhook run's report. Shared by the run and by `agent webhook redeliver`.
 */
import { describeWebhookDelivery, EMPTY_ANSWER_NOTICE, type WebhookDelivery } from '../../domain/webhook/webhookRun.js';
import type { AnswerLog } from '../ports/AnswerLog.js';
import type { Logger } from '../ports/Logger.js';
import type { AnswerDelivery, AnswerTarget } from '../runs/AnswerDelivery.js';
import { laneOf } from '../runs/AnswerDelivery.js';
import type { WebhookRunReport } from './webhookRunReport.js';

export { logAnswer } from '../runs/AnswerDelivery.js';

/** The target a webhook delivery is, among every run kind's. */
export function answerTargetOf(delivery: WebhookDelivery): AnswerTarget {
  return delivery.kind === 'platform' ? delivery.target : delivery;
}

/** The lane of a delivery: its platform's, the code host's, or the log's. */
export function laneOfDelivery(delivery: WebhookDelivery): string {
  return laneOf(answerTargetOf(delivery));
}

/**
 * Delivers a webhook run's answer where its route sends it (docs/webhooks.md); an empty answer is
 * delivered as EMPTY_ANSWER_NOTICE, and said so in the log. Never throws: a failure is a
 * `delivery_failed` report whose error names where it went and why.
 */
export async function deliverWebhookAnswer(
  answers: AnswerDelivery,
  log: Logger,
  routeName: string,
  delivery: WebhookDelivery,
  answer: string,
  about: Record<string, string>,
  answerLog: AnswerLog | null = null,
): Promise<WebhookRunReport & { loggedTo?: string }> {
  const where = describeWebhookDelivery(delivery);
  const empty = answer.trim() === '';
  if (empty) log.warn(`the agent gave an empty answer on route '${routeName}'; delivering a notice instead`, about);
  const [sent] = await answers.send([answerTargetOf(delivery)], empty ? EMPTY_ANSWER_NOTICE : answer, {
    kind: 'webhook',
    route: routeName,
    about,
    answerLog,
  });
  if (sent === undefined || sent.outcome === 'failed') {
    const message = sent?.error ?? `delivery to ${where} failed: nothing was sent`;
    log.error(`webhook ${message}`, about);
    return { status: 'delivery_failed', error: message };
  }
  if (delivery.kind !== 'log') log.info(`webhook answer on route '${routeName}' delivered to ${where}`, about);
  return {
    status: 'delivered',
    error: null,
    messageIds: sent.message_ids,
    ...(sent.loggedTo === undefined ? {} : { loggedTo: sent.loggedTo }),
  };
}
