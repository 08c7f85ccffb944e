/**
 * The records a webhook run leaves: its run record (WebhookRunRecords) and, side by side, its
 * entry in the run ledger, built from the run record and written by the run pipeline's
 * RunRecorder. A record that cannot be written or read is logged, and the run goes on.
 */
import { inject, injectable } from 'inversify';
import { errorText } from '../../domain/errors.js';
import { ledgerRunOf } from '../../domain/webhook/webhookLedgerRun.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import type { WebhookRunRecord } from '../../domain/webhook/webhookRunRecord.js';
import type { Logger } from '../ports/Logger.js';
import { TOKENS } from '../ports/tokens.js';
import type { WebhookRunRecords } from '../ports/WebhookRunRecords.js';
import { RunRecorder, type ShownLater } from '../runs/RunRecorder.js';

/** Writes and reads the records of webhook runs. */
@injectable()
export class WebhookRunRecorder {
  constructor(
    @inject(TOKENS.WebhookRunRecords) private readonly records: WebhookRunRecords,
    @inject(RunRecorder) readonly ledger: RunRecorder,
    @inject(TOKENS.Logger) private readonly log: Logger,
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

  /** The run record of the event `id` of `route`, read as it is now; throws when it cannot be read. */
  find(route: string, id: string): Promise<WebhookRunRecord | null> {
    return this.records.find(route, id);
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

  /** Saves only the run record (a redelivery's outcome: the ledger's record is the redelivery's own). */
  async saveRecord(record: WebhookRunRecord): Promise<void> {
    await this.save(record, { event_id: record.eventId, route: record.route }, false, null, [], false);
  }

  /** See RunRecorder.later. */
  later(write: (stopped: AbortSignal) => Promise<unknown>): ShownLater {
    return this.ledger.later(write);
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
  ): ShownLater {
    return this.later(async (stopped) => {
      const record = await this.records.find(event.route, event.id, event.receivedAt).catch(() => null);
      if (record !== null && !stopped.aborted) await this.toLedger(record, about, model, []);
    });
  }

  /** A run starts: its `run.started` event, from its run record. */
  async started(record: WebhookRunRecord): Promise<void> {
    await this.ledger.started(ledgerRunOf(record, null, [], this.ledger.now()));
  }

  /** The run's entry in the run ledger, from its run record; a failure is logged. */
  async toLedger(record: WebhookRunRecord, about: Record<string, string>, model: string | null, messageIds: string[]): Promise<void> {
    await this.ledger.save(ledgerRunOf(record, model, messageIds, this.ledger.now()), about);
  }
}
