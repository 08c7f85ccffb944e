import { inject, injectable } from 'inversify';
import { coalescedPrompt } from '../../domain/webhook/coalesce.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import { AGENT_NOT_RUN, isFinalOutcome, type WebhookRunRecord } from '../../domain/webhook/webhookRunRecord.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import { describeWebhookDelivery, type WebhookDelivery } from '../../domain/webhook/webhookRun.js';
import type { Logger } from '../ports/Logger.js';
import { TOKENS } from '../ports/tokens.js';
import { RunMeter } from '../runs/RunMeter.js';
import { unexpectedFailureMessage } from '../runs/runErrors.js';
import { laneOfDelivery } from './webhookAnswerDelivery.js';
import { WebhookAgentStep } from './WebhookAgentStep.js';
import { WebhookAnswerStep } from './WebhookAnswerStep.js';
import {
  aboutEvent,
  idsOf,
  type PendingWebhookDelivery,
  type WebhookAnswerOutcome,
  type WebhookRunReport,
  type WebhookRunStatus,
} from './webhookRunReport.js';
import { WebhookRunPreparation } from './WebhookRunPreparation.js';
import { WebhookRunRecorder } from './WebhookRunRecorder.js';

export type { PendingWebhookDelivery, WebhookAnswerOutcome, WebhookRunReport, WebhookRunStatus } from './webhookRunReport.js';

/**
 * The run path of one accepted webhook event (docs/webhooks.md), on the run pipeline
 * (docs/architecture.md): resolve the route and its delivery (WebhookRunPreparation), render the
 * prompt and run a fresh unattended session (WebhookAgentStep), deliver the answer, an empty one
 * too (WebhookAnswerStep). Every ending is logged; it never throws.
 *
 * Every run is recorded (WebhookRunRecorder), and the answer is recorded before it is delivered.
 * An event run again after a crash or a stop is looked up first: an answer already recorded is
 * only delivered, never asked for again, and an event whose run had ended is not repeated.
 */
@injectable()
export class WebhookEventExecution {
  constructor(
    @inject(WebhookRunPreparation) private readonly preparation: WebhookRunPreparation,
    @inject(WebhookAgentStep) private readonly agent: WebhookAgentStep,
    @inject(WebhookAnswerStep) private readonly answers: WebhookAnswerStep,
    @inject(WebhookRunRecorder) private readonly recorder: WebhookRunRecorder,
    @inject(RunMeter) private readonly meter: RunMeter,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /** The whole run: the agent's answer, then its delivery. */
  async run(event: WebhookEvent, signal?: AbortSignal): Promise<WebhookRunReport> {
    const answered = await this.answer(event, signal);
    return answered.pending ? this.deliverAnswer(answered.pending) : answered.report;
  }

  /**
   * The agent's part of the run, up to its answer recorded (synced) in the run record: the answer
   * then waits for {@link deliverAnswer}, which the gateway's worker calls in the platform's lane,
   * so that no run slot waits for a platform. Every other ending is final and reported.
   */
  async answer(event: WebhookEvent, signal?: AbortSignal): Promise<WebhookAnswerOutcome> {
    const startedAtMs = this.meter.start();
    // One trace per run, linked to the requests that accepted its events (docs/traces.md).
    const trace = this.recorder.ledger.trace({
      kind: 'webhook_run',
      route: event.route,
      event: event.event,
      deliveryId: event.deliveryId,
      eventId: event.id,
      links: acceptedIn(event),
    });
    let outcome: WebhookAnswerOutcome | null = null;
    try {
      outcome = await trace.within(() => this.answerOnce(event, startedAtMs, signal));
    } finally {
      // An answer waiting for its delivery keeps the trace open: the delivery ends it.
      if (outcome?.pending) outcome.pending.trace = trace;
      else trace.end(outcome ? { outcome: outcome.report.status, error: outcome.report.error } : { error: 'the run failed' });
    }
    if (outcome.report) this.meter.finished('webhook', outcome.report.status, startedAtMs);
    return outcome;
  }

  /**
   * Delivers the recorded answer of `pending` (an empty one as a notice) and records how it went,
   * in the run's trace. Never throws; an answer that cannot be read back is a failed delivery.
   */
  async deliverAnswer(pending: PendingWebhookDelivery): Promise<WebhookRunReport> {
    const { trace } = pending;
    if (!trace) return this.answers.deliver(pending);
    const report = await trace.within(() => this.answers.deliver(pending));
    trace.end({ outcome: report.status, error: report.error });
    return report;
  }

  private async answerOnce(event: WebhookEvent, startedAtMs: number, signal?: AbortSignal): Promise<WebhookAnswerOutcome> {
    const final = (report: WebhookRunReport): WebhookAnswerOutcome => ({ report, pending: null });
    const about = aboutEvent(event);
    // An event handed out for the first time since this process accepted it has no earlier record to find.
    const previous = event.resumed === false ? null : await this.recorder.read(event, about);
    let record: WebhookRunRecord = previous ?? {
      eventId: event.id,
      route: event.route,
      event: event.event,
      deliveryId: event.deliveryId,
      receivedAt: event.receivedAt,
      startedAt: this.recorder.ledger.now().toISOString(),
      outcome: 'running',
      deliveredTo: null,
      prompt: null,
      answer: null,
      error: null,
      ...(event.coalesced ? { coalesced: event.coalesced.map((member) => member.deliveryId) } : {}),
    };
    if (previous === null) await this.recorder.started(record);
    // Only the answer is saved synced: it is what a restart must find before delivering again.
    // The rest shows progress; the inbox's done record is what keeps an ended event from running again.
    let model: string | null = null;
    const note = async (changes: Partial<WebhookRunRecord>, synced = false, answeredBy?: string): Promise<boolean> => {
      record = { ...record, ...changes };
      if (answeredBy !== undefined) model = answeredBy;
      // An answer waiting for its delivery reaches the ledger with the delivery's outcome, or
      // once the delivery has waited a while (pendingOf).
      return this.recorder.save(record, about, synced, model, [], record.outcome !== 'answered');
    };
    const pendingOf = (route: WebhookRoute, delivery: WebhookDelivery, unrecordedAnswer?: string): WebhookAnswerOutcome => {
      const pending: PendingWebhookDelivery = { event: idsOf(event), route, delivery, lane: laneOfDelivery(delivery), startedAtMs, model };
      if (unrecordedAnswer !== undefined) {
        // Not in its run record: the ledger is what shows it while it waits.
        void this.recorder.toLedger(record, about, model, []);
        return { report: null, pending: { ...pending, unrecordedAnswer } };
      }
      return { report: null, pending: { ...pending, shownInLedger: this.recorder.showInLedgerLater(pending.event, pending.model, about) } };
    };
    try {
      if (previous && isFinalOutcome(previous.outcome)) {
        this.log.info(`webhook event ${event.id} had already ended (${previous.outcome}) before the restart; it is not run again`, about);
        return final({ status: previous.outcome as WebhookRunStatus, error: previous.error });
      }
      const prepared = await this.preparation.prepare(event);
      if ('error' in prepared) {
        this.log.error(`webhook event not run: ${prepared.error}`, about);
        await note({ outcome: 'not_run', error: prepared.error });
        return final({ status: 'not_run', error: prepared.error });
      }
      const { route, delivery } = prepared;
      if (previous?.answer != null) {
        this.log.info(
          `webhook event ${event.id} was answered before the gateway stopped; delivering that answer without running the agent again`,
          about,
        );
        await note({ outcome: 'answered', deliveredTo: describeWebhookDelivery(delivery), error: null });
      } else if (route.deliverOnly) {
        // The rendered prompt is the message: nothing is asked of a model.
        const message = coalescedPrompt(route, event);
        this.log.info(
          `webhook event ${event.id} on route '${route.name}' is delivered as its rendered prompt, without running the agent (deliver_only)`,
          about,
        );
        const answered = { outcome: 'answered', deliveredTo: describeWebhookDelivery(delivery), prompt: message, answer: message } as const;
        const recorded = await note({ ...answered, agent: AGENT_NOT_RUN, error: null }, true);
        if (!recorded) return pendingOf(route, delivery, message);
      } else {
        // Saved with the prompt, once it is rendered.
        record = { ...record, outcome: 'running', deliveredTo: describeWebhookDelivery(delivery), error: null };
        const asked = await this.agent.ask(route, event, note, about, signal);
        if ('status' in asked) return final(asked);
        if (!asked.recorded) return pendingOf(route, delivery, asked.answer);
      }
      return pendingOf(route, delivery);
    } catch (error) {
      // A port that broke its promise not to throw (a skill file that cannot be read …).
      const message = unexpectedFailureMessage(error);
      this.log.error(message, about);
      await note({ outcome: 'run_failed', error: message });
      return final({ status: 'run_failed', error: message });
    }
  }
}

/** The traceparents of the requests that accepted the events of a run: the event's, or each coalesced one's. */
function acceptedIn(event: WebhookEvent): string[] {
  const all = event.coalesced ? event.coalesced.map((member) => member.traceparent) : [event.traceparent];
  return all.filter((traceparent): traceparent is string => traceparent !== undefined);
}
