import { escapeControlCharacters } from '../../domain/controlCharacters.js';
import { errorText } from '../../domain/errors.js';
import { describeWebhookDelivery, EMPTY_ANSWER_NOTICE, type WebhookDelivery } from '../../domain/webhook/webhookRun.js';
import type { AnswerLog } from '../ports/AnswerLog.js';
import type { DeliveryChannel } from '../ports/DeliveryChannel.js';
import type { Logger } from '../ports/Logger.js';
import { RepoCommentError, type RepoCommenter } from '../ports/RepoCommenter.js';
import type { WebhookRunReport } from './WebhookEventExecution.js';

/** What delivering a webhook answer takes. */
export interface WebhookAnswerPorts {
  channel: DeliveryChannel;
  commenter: RepoCommenter;
  log: Logger;
  /** Where an answer delivered to `log` goes; without it, `log` itself (the gateway's own run). */
  answerLog?: AnswerLog | null;
}

/** The lane of a delivery: its platform's, the code host's, or the log's. */
export function laneOfDelivery(delivery: WebhookDelivery): string {
  return delivery.kind === 'platform' ? `platform:${delivery.target.platform}` : delivery.kind;
}

/** The gateway log's entry of an answer delivered to `log`. */
export function logAnswer(log: Logger, route: string, text: string, about: Record<string, string>): void {
  log.info(`webhook answer on route '${route}':\n${text}`, about);
}

/**
 * Delivers a webhook run's answer where its route sends it (docs/webhooks.md): to the log, as a
 * comment on the pull request, or to a chat platform (with its splitting and retries); an empty
 * answer is delivered as EMPTY_ANSWER_NOTICE, and said so in the log. Shared by the run and by
 * `agent webhook redeliver`. Never throws: a failure is a `delivery_failed` report whose error
 * names where it went and why.
 */
export async function deliverWebhookAnswer(
  ports: WebhookAnswerPorts,
  routeName: string,
  delivery: WebhookDelivery,
  answer: string,
  about: Record<string, string>,
): Promise<WebhookRunReport & { loggedTo?: string }> {
  const where = describeWebhookDelivery(delivery);
  const empty = answer.trim() === '';
  if (empty) ports.log.warn(`the agent gave an empty answer on route '${routeName}'; delivering a notice instead`, about);
  const text = empty ? EMPTY_ANSWER_NOTICE : answer;
  let messageIds: string[] = [];
  let loggedTo: string | undefined;
  try {
    switch (delivery.kind) {
      case 'log':
        if (ports.answerLog) loggedTo = await ports.answerLog.write(routeName, text, about);
        else logAnswer(ports.log, routeName, text, about);
        break;
      case 'repo_comment':
        await ports.commenter.comment({ repo: delivery.repo, prNumber: delivery.prNumber, body: text });
        break;
      case 'platform':
        messageIds = (await ports.channel.deliver(delivery.target, text)).messageIds;
        break;
    }
  } catch (error) {
    const reason =
      error instanceof RepoCommentError && error.reason !== 'failed' ? `${error.message} (no comment was posted)` : errorText(error);
    // What a platform or gh answered may hold control characters; the run record keeps none but line breaks and tabs.
    const message = escapeControlCharacters(`delivery to ${where} failed: ${reason}`, '\n\t');
    ports.log.error(`webhook ${message}`, about);
    return { status: 'delivery_failed', error: message };
  }
  if (delivery.kind !== 'log') ports.log.info(`webhook answer on route '${routeName}' delivered to ${where}`, about);
  return { status: 'delivered', error: null, messageIds, ...(loggedTo === undefined ? {} : { loggedTo }) };
}
