/**
 * The records a webhook run leaves: its run record (WebhookRunRecords) and, side by side, its
 * entry in the run ledger, built from the run record. A run or a waiting delivery still going
 * after RUNNING_RECORD_AFTER_MS shows there until it ends; a record that cannot be written or
 * read is logged, and the run goes on.
 */
import { RUNNING_RECORD_AFTER_MS, type RunRecord, type RunStatus } from '../../domain/runs/RunRecord.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import type { WebhookRunRecord } from '../../domain/webhook/webhookRunRecord.js';
import { errorText } from '../../domain/errors.js';
import type { Clock } from '../ports/Clock.js';
import type { Logger } from '../ports/Logger.js';
import type { RunLedger } from '../ports/RunLedger.js';
import type { Timer } from '../ports/Timer.js';
import type { WebhookRunRecords } from '../ports/WebhookRunRecords.js';

/** A record written only once its run has gone on for RUNNING_RECORD_AFTER_MS; stopped (and awaited) before the next is written. */
export interface RecordedLater {
  stop: AbortController;
  written: Promise<void>;
}

/** Writes and reads the records of webhook runs. */
export class WebhookRunRecorder {
  constructor(
    private readonly records: WebhookRunRecords,
    private readonly ledger: RunLedger,
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly timer: Timer,
  ) {}

  /** The run record of `event`, if any; a record that cannot be read is logged and counts as none. */
  async read(event: Pick<WebhookEvent, 'id' | 'route' | 'receivedAt'>, about: Record<string, string>): Promise<WebhookRunRecord | null> {
    try {
      return await this.records.find(event.route, event.id, event.receivedAt);
    } catch (error) {
      this.log.warn(`could not read the run record of webhook event ${event.id}: ${errorText(error)}`, about);
      return null;
    }
  }

  /**
   * Saves the run record and the run's entry in the run ledger, side by side. A record that
   * cannot be written is logged (false): the run and its delivery go on; so for the ledger.
   */
  async save(
    record: WebhookRunRecord,
    about: Record<string, string>,
    synced: boolean,
    model: string | null,
    messageIds: string[] = [],
    ledger = true,
  ): Promise<boolean> {
    const [saved] = await Promise.all([
      this.records.save(record, synced).then(
        () => true,
        (error: unknown) => {
          this.log.warn(`could not write the run record of webhook event ${record.eventId}: ${errorText(error)}`, about);
          return false;
        },
      ),
      ledger ? this.toLedger(record, about, model, messageIds) : undefined,
    ]);
    return saved;
  }

  /**
   * Calls `write` once RUNNING_RECORD_AFTER_MS have passed, unless stopped before; `write` is
   * given the stop's signal, to check again after a wait of its own.
   */
  later(write: (stopped: AbortSignal) => Promise<unknown>): RecordedLater {
    const stop = new AbortController();
    const written = this.timer.wait(RUNNING_RECORD_AFTER_MS, stop.signal, { background: true }).then(async () => {
      if (stop.signal.aborted) return;
      await write(stop.signal);
    });
    return { stop, written };
  }

  /**
   * Writes the ledger entry of an answer whose delivery is still waiting after
   * RUNNING_RECORD_AFTER_MS, from its run record read back then (a waiting delivery keeps no
   * answer in memory); stopped by the delivery.
   */
  showInLedgerLater(
    event: Pick<WebhookEvent, 'id' | 'route' | 'receivedAt'>,
    model: string | null,
    about: Record<string, string>,
  ): RecordedLater {
    return this.later(async (stopped) => {
      const record = await this.records.find(event.route, event.id, event.receivedAt).catch(() => null);
      if (record !== null && !stopped.aborted) await this.toLedger(record, about, model, []);
    });
  }

  /** The run's entry in the run ledger, from its run record; a failure is logged. */
  async toLedger(record: WebhookRunRecord, about: Record<string, string>, model: string | null, messageIds: string[]): Promise<void> {
    await this.ledger.save(ledgerRunOf(record, model, messageIds, this.clock.now())).catch((error: unknown) => {
      this.log.warn(`could not write webhook event ${record.eventId} to the run ledger: ${errorText(error)}`, about);
    });
  }
}

/** The run ledger's words for where a webhook run stands. */
const LEDGER_STATUS: Readonly<Record<WebhookRunRecord['outcome'], RunStatus>> = {
  running: 'running',
  answered: 'running',
  delivered: 'ok',
  delivery_failed: 'delivery_failed',
  run_failed: 'error',
  not_run: 'blocked_config',
  abandoned: 'error',
};

/** The run ledger's record of a webhook run, from its run record. */
function ledgerRunOf(record: WebhookRunRecord, model: string | null, messageIds: string[], now: Date): RunRecord {
  const status = LEDGER_STATUS[record.outcome];
  const ended = status !== 'running';
  const sent = record.outcome === 'delivered' || record.outcome === 'delivery_failed';
  return {
    id: record.eventId,
    kind: 'webhook',
    subject: record.route,
    name: record.route,
    slot: null,
    event: record.event,
    delivery_id: record.deliveryId,
    started_at: record.startedAt,
    finished_at: ended ? now.toISOString() : null,
    status,
    model,
    prompt: record.prompt,
    answer: record.answer,
    error: record.error,
    deliveries:
      sent && record.deliveredTo !== null
        ? [
            {
              target: record.deliveredTo,
              outcome: record.outcome === 'delivered' ? 'delivered' : 'failed',
              message_ids: record.outcome === 'delivered' ? messageIds : [],
              error: record.outcome === 'delivered' ? null : record.error,
            },
          ]
        : [],
  };
}
