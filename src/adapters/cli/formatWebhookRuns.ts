import type { WebhookRunRecord } from '../../domain/webhook/webhookRunRecord.js';
import type { ListedWebhookRun } from '../../application/webhook/ListWebhookRuns.js';
import { costInWords, tokensInWords, wallClockWithSeconds } from './formatJobDetails.js';
import { textTable } from './textTable.js';

function firstLine(text: string): string {
  const line =
    text
      .split('\n')
      .find((each) => each.trim() !== '')
      ?.trim() ?? '';
  return line.length <= 80 ? line : `${line.slice(0, 79)}…`;
}

/** How a run ended, in a few words: where it was delivered, or the first line of why not. */
function outcomeOf(record: WebhookRunRecord): string {
  if (record.outcome === 'delivered') return record.deliveredTo ? `delivered to ${record.deliveredTo}` : 'delivered';
  return record.error ? `${record.outcome}: ${firstLine(record.error)}` : record.outcome;
}

/** The `agent webhook runs` table: time, the run's id, route, event, delivery id, outcome. */
export function webhookRunTable(records: readonly WebhookRunRecord[], timeZone: string): string {
  return textTable(
    [`TIME (${timeZone})`, 'ID', 'ROUTE', 'EVENT', 'DELIVERY ID', 'TOKENS', 'COST', 'OUTCOME'],
    records.flatMap((record) => [
      [
        wallClockWithSeconds(new Date(record.startedAt), timeZone),
        record.eventId,
        record.route,
        firstLine(record.event),
        record.deliveryId,
        tokensInWords(record.usage),
        costInWords(record.costUsd),
        record.coalesced ? `${outcomeOf(record)} (${record.coalesced.length} coalesced)` : outcomeOf(record),
      ],
      // The other deliveries this run took in, each on a line of its own under it.
      ...coalescedRows(record),
    ]),
  );
}

/** A line per delivery coalesced into `record`'s run, but for the run's own (its last). */
function coalescedRows(record: WebhookRunRecord): string[][] {
  const others = (record.coalesced ?? []).slice(0, -1);
  return others.map((deliveryId) => ['', '', record.route, '', deliveryId, '', '', `coalesced into ${record.eventId}`]);
}

/** A run record as `agent webhook runs --json` shows it. */
export function webhookRunJson(record: ListedWebhookRun) {
  return {
    id: record.eventId,
    started_at: record.startedAt,
    finished_at: record.ledger?.finished_at ?? null,
    received_at: record.receivedAt,
    route: record.route,
    event: record.event,
    delivery_id: record.deliveryId,
    event_id: record.eventId,
    outcome: record.outcome,
    delivered_to: record.deliveredTo,
    error: record.error,
    prompt: record.prompt,
    answer: record.answer,
    agent: record.agent ?? null,
    status: record.ledger?.status ?? null,
    model: record.ledger?.model ?? null,
    deliveries: record.ledger?.deliveries ?? [],
    redelivered_at: record.ledger?.redelivered_at ?? null,
    usage: record.ledger?.usage ?? record.usage ?? null,
    cost_usd: record.ledger?.cost_usd ?? record.costUsd ?? null,
    coalesced: record.coalesced ?? [],
    trace_id: record.ledger?.trace_id ?? null,
  };
}
