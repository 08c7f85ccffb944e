/**
 * The delivery of a webhook run's recorded answer, in its platform's lane: the answer read back
 * from its run record (a waiting delivery keeps none in memory), delivered through the run
 * pipeline's AnswerDelivery, and how it went recorded and measured.
 */
import { inject, injectable } from 'inversify';
import { describeWebhookDelivery } from '../../domain/webhook/webhookRun.js';
import type { Logger } from '../ports/Logger.js';
import { TOKENS } from '../ports/tokens.js';
import { AnswerDelivery } from '../runs/AnswerDelivery.js';
import { RunMeter } from '../runs/RunMeter.js';
import { deliverWebhookAnswer } from './webhookAnswerDelivery.js';
import { aboutEvent, type PendingWebhookDelivery, type WebhookRunReport } from './webhookRunReport.js';
import { WebhookRunRecorder } from './WebhookRunRecorder.js';

/** Delivers webhook runs' answers. */
@injectable()
export class WebhookAnswerStep {
  constructor(
    @inject(WebhookRunRecorder) private readonly recorder: WebhookRunRecorder,
    @inject(AnswerDelivery) private readonly answers: AnswerDelivery,
    @inject(RunMeter) private readonly meter: RunMeter,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /**
   * Delivers the recorded answer of `pending` (an empty one as a notice) and records how it went.
   * Never throws; an answer that cannot be read back is a failed delivery.
   */
  async deliver(pending: PendingWebhookDelivery): Promise<WebhookRunReport> {
    const { event, route, delivery } = pending;
    const about = aboutEvent(event);
    let report: WebhookRunReport;
    if (pending.shownInLedger) await pending.shownInLedger.stop('delivering');
    const record = await this.recorder.read(event, about);
    const answer = pending.unrecordedAnswer ?? record?.answer ?? null;
    if (answer === null) {
      const message = `delivery to ${describeWebhookDelivery(delivery)} failed: the recorded answer could not be read back`;
      this.log.error(`webhook ${message}`, about);
      report = { status: 'delivery_failed', error: message };
    } else {
      const { loggedTo: _loggedTo, ...delivered } = await deliverWebhookAnswer(this.answers, this.log, route.name, delivery, answer, about);
      report = delivered;
      if (record)
        await this.recorder.save(
          { ...record, outcome: report.status, error: report.error },
          about,
          false,
          pending.model,
          report.messageIds ?? [],
        );
    }
    this.meter.finished('webhook', report.status, pending.startedAtMs);
    return report;
  }
}
