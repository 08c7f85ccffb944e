import { inject, injectable, optional } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { RunError } from '../../domain/errors.js';
import { whyNotRedeliverable } from '../../domain/runs/redelivery.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import { webhookDeliveryNamed } from '../../domain/webhook/webhookRun.js';
import { isFinalOutcome } from '../../domain/webhook/webhookRunRecord.js';
import type { AnswerLog } from '../ports/AnswerLog.js';
import type { Logger } from '../ports/Logger.js';
import type { RunLedger } from '../ports/RunLedger.js';
import { TOKENS } from '../ports/tokens.js';
import { AnswerDelivery } from '../runs/AnswerDelivery.js';
import { RedeliveryClaims } from '../runs/RedeliveryClaims.js';
import { deliverWebhookAnswer } from './webhookAnswerDelivery.js';
import type { WebhookRunReport } from './webhookRunReport.js';
import { WebhookRunRecorder } from './WebhookRunRecorder.js';

/** `[SILENT]` means nothing for webhook routes: a webhook answer is delivered as it is. */
const WEBHOOK = { silentIsNothing: false };
/** How many of a route's newest runs `redeliver <route>` looks through for one with an answer. */
const ROUTE_RUNS_SEARCHED = 50;

export interface RedeliverWebhookRunOutput {
  /** The run as the ledger holds it afterwards: its delivery, status and `redelivered_at`. */
  run: RunRecord;
  /** How the delivery went: `delivered` or `delivery_failed`, with the error. */
  report: WebhookRunReport;
  /** Where the answer went (`the log`, `octo/widgets#12`, `telegram:-100123`). */
  deliveredTo: string;
  /** The answer delivered. */
  answer: string;
  /** For an answer delivered to `log`: which log it is in (AnswerLog); null otherwise. */
  loggedTo: string | null;
}

/**
 * `agent webhook redeliver <run id>` (docs/webhooks.md): the recorded answer of a webhook run is
 * delivered again where its run delivered it (its record's `Delivered to`), through the run's own
 * delivery (deliverWebhookAnswer: the log, a pull-request comment, or a chat platform with its
 * splitting and retries), without running the agent. The run record's outcome and error and the
 * ledger's status, delivery and `redelivered_at` then say how it went. The run is claimed in
 * the ledger first, so that two redeliveries of it never both send it.
 */
@injectable()
export class RedeliverWebhookRun {
  constructor(
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(WebhookRunRecorder) private readonly records: WebhookRunRecorder,
    @inject(RedeliveryClaims) private readonly claims: RedeliveryClaims,
    @inject(AnswerDelivery) private readonly answers: AnswerDelivery,
    @inject(TOKENS.Logger) private readonly log: Logger,
    /** Without it, an answer delivered to `log` goes to `log` (tests that build this by hand). */
    @inject(TOKENS.AnswerLog) @optional() private readonly answerLog: AnswerLog | null = null,
  ) {}

  /**
   * `run` is a run's id, or a route's name: its latest run that has an answer. Throws
   * RUNS.NOT_FOUND, RUNS.NOTHING_TO_DELIVER or RUNS.BUSY; a failed delivery is an outcome, not an error.
   */
  async execute(input: { run: string; by?: string }): Promise<RedeliverWebhookRunOutput> {
    const id = input.run.trim();
    const byId = await this.ledger.get(id);
    const found = byId !== null && byId.kind === 'webhook' ? byId : await this.latestOfRoute(id);
    const what = `webhook run ${found.id} (route '${found.subject}')`;
    // Refused before the claim; checked again once claimed, in case the run changed meanwhile.
    await this.plan(found, what);

    const claimed = await this.claims.claim(found, what, `see "agent webhook runs ${found.subject}"`);
    let saved: RunRecord = claimed;
    try {
      const { record, answer, delivery, deliveredTo } = await this.plan(claimed, what);
      const about = { event_id: claimed.id, route: claimed.subject, event: claimed.event ?? '', delivery_id: claimed.delivery_id ?? '' };
      const { loggedTo, ...report } = await deliverWebhookAnswer(
        this.answers,
        this.log,
        claimed.subject,
        delivery,
        answer,
        about,
        this.answerLog,
      );
      const delivered = report.status === 'delivered';
      saved = this.claims.redelivered(claimed, {
        status: delivered ? 'ok' : 'delivery_failed',
        error: report.error,
        deliveries: [
          { target: deliveredTo, outcome: delivered ? 'delivered' : 'failed', message_ids: report.messageIds ?? [], error: report.error },
        ],
        redelivered_by: input.by,
      });
      if (record !== null) await this.records.saveRecord({ ...record, outcome: report.status, error: report.error });
      return { run: saved, report, deliveredTo, answer, loggedTo: loggedTo ?? null };
    } finally {
      await this.claims.release(saved);
    }
  }

  /** The latest run of route `route` that has an answer to deliver again; RUNS.NOT_FOUND when it has no run. */
  private async latestOfRoute(route: string): Promise<RunRecord> {
    const runs = await this.ledger.list({ kind: 'webhook', subject: route, limit: ROUTE_RUNS_SEARCHED });
    if (runs.length === 0) {
      throw new RunError(
        ERROR_CODES.RUNS.NOT_FOUND,
        `No webhook run has the id "${route}"; "agent webhook runs" lists the runs with their ids.`,
      );
    }
    const answered = runs.find((run) => whyNotRedeliverable(run, WEBHOOK) === null);
    if (!answered) {
      throw new RunError(
        ERROR_CODES.RUNS.NOTHING_TO_DELIVER,
        `No run of route '${route}' has an answer to deliver again: its latest run ${whyNotRedeliverable(runs[0]!, WEBHOOK)}.`,
      );
    }
    return answered;
  }

  /**
   * The run's record, its answer and where it goes, read afresh; RUNS.NOTHING_TO_DELIVER when it
   * has no answer (it failed, was not run, or still goes on) or does not say where it went.
   */
  private async plan(run: RunRecord, what: string) {
    const record = await this.records.find(run.subject, run.id);
    // The run record is saved synced with the answer; the ledger may lag behind it.
    const goingOn = record !== null && !isFinalOutcome(record.outcome) && record.outcome !== 'abandoned';
    const answer = record?.answer ?? run.answer;
    const why = whyNotRedeliverable({ status: goingOn ? 'running' : run.status, answer, error: record?.error ?? run.error }, WEBHOOK);
    if (why !== null) throw new RunError(ERROR_CODES.RUNS.NOTHING_TO_DELIVER, `The ${what} has no answer to deliver: it ${why}.`);
    const deliveredTo = record?.deliveredTo ?? run.deliveries[0]?.target ?? null;
    const delivery = deliveredTo === null ? null : webhookDeliveryNamed(deliveredTo);
    if (deliveredTo === null || delivery === null) {
      throw new RunError(
        ERROR_CODES.RUNS.NOTHING_TO_DELIVER,
        `The ${what} does not say where its answer went, so it cannot be delivered again.`,
      );
    }
    return { record, answer: answer!, delivery, deliveredTo };
  }
}
