import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';

/**
 * The webhook inbox's journal format (one JSON object per line, UTF-8):
 *
 *     {"accept":{…the WebhookEvent…}}   the event was accepted (its 202 waited for this line)
 *     {"claim":"<event id>"}            a run of it started
 *     {"done":"<event id>"}             its run ended; it is never handed out again
 *     {"seen":"<delivery key>","at":ms} a delivery accepted at `at`, remembered for an hour
 *
 * An accept record of a delivery the sender named carries its idempotency key as `"key"`;
 * `seen` records carry the keys of events already done across a rewrite of the journal.
 * Blank lines are slack (space kept for records to come) and mean nothing.
 *
 * Each process appends to a journal of its own, `journal-<claimant>.ndjson` with the claimant
 * (`<host>:<pid>`) URI-encoded. Journals a process takes over from a dead one are first renamed
 * to `journal-<its own claimant>+<n>.ndjson`: `+` never occurs in an encoded claimant, so the
 * owner of every journal is in its name.
 */
const PREFIX = 'journal-';
const SUFFIX = '.ndjson';

/** The file name of `claimant`'s journal, or of a journal it adopted (`part`). */
export function journalName(claimant: string, part?: string): string {
  return `${PREFIX}${encodeURIComponent(claimant)}${part === undefined ? '' : `+${part}`}${SUFFIX}`;
}

/** Whose journal the file `name` is, or null when it is no journal. */
export function journalOwner(name: string): string | null {
  if (!name.startsWith(PREFIX) || !name.endsWith(SUFFIX)) return null;
  const encoded = name.slice(PREFIX.length, -SUFFIX.length).split('+')[0]!;
  try {
    return decodeURIComponent(encoded) || null;
  } catch {
    return null;
  }
}

/**
 * The accept record of `event`. With `payloadJson`, the text its payload was parsed from, that
 * text is written in place of the payload encoded again, when it fits on the record's line.
 */
export function acceptRecord(event: WebhookEvent, payloadJson?: string, deliveryKey?: string): string {
  let accept: string;
  if (payloadJson === undefined || payloadJson.includes('\n')) accept = JSON.stringify(event);
  else {
    const { payload: _encodedBelow, ...envelope } = event;
    accept = `${JSON.stringify(envelope).slice(0, -1)},"payload":${payloadJson}}`;
  }
  return `{"accept":${accept}${deliveryKey === undefined ? '' : `,"key":${JSON.stringify(deliveryKey)}`}}\n`;
}
export const claimRecord = (eventId: string): string => `{"claim":${JSON.stringify(eventId)}}\n`;
export const doneRecord = (eventId: string): string => `{"done":${JSON.stringify(eventId)}}\n`;
export const seenRecord = (deliveryKey: string, atMs: number): string => `{"seen":${JSON.stringify(deliveryKey)},"at":${atMs}}\n`;

/** The event of an accept record written by `acceptRecord`. */
export function eventOfAcceptRecord(line: string): WebhookEvent {
  return (JSON.parse(line) as { accept: WebhookEvent }).accept;
}

/** An event not yet done, as it stands in the journals read. */
export interface JournalEntry {
  event: WebhookEvent;
  /** Its accept record, as `acceptRecord` writes it. */
  line: string;
  /** The journal its accept was read from; null for an event from elsewhere. */
  source: string | null;
  /** A run of it started and did not end. */
  claimed: boolean;
}

/** A line that is no record: kept aside by the caller, skipped here. */
export interface DamagedLine {
  source: string;
  lineNumber: number;
  line: string;
  problem: string;
}

export interface JournalState {
  /** Events not done, in the order their accepts were read. */
  entries: JournalEntry[];
  damaged: DamagedLine[];
  /** Sources whose last line has no newline: an append cut short, which nobody was told had succeeded. */
  torn: string[];
  /** Delivery keys accepted, with when, oldest first (the caller drops those past their hour). */
  deliveries: Array<{ key: string; atMs: number }>;
}

/**
 * Reads journals (and events from elsewhere, as accept records) together: an event is pending
 * when some source accepted it and none marked it done. An event found twice (a crash in the
 * middle of taking over a journal leaves it in two) counts once, in its first place.
 */
export class JournalReader {
  private readonly accepted = new Map<string, JournalEntry>();
  private readonly claimed = new Set<string>();
  private readonly done = new Set<string>();
  private readonly damaged: DamagedLine[] = [];
  private readonly torn: string[] = [];
  private readonly deliveries = new Map<string, number>();

  /** Reads the text of one journal; `source` names it in reports. */
  read(source: string, text: string): void {
    const lines = text.split('\n');
    const last = lines.pop();
    if (last !== undefined && last !== '') this.torn.push(source);
    lines.forEach((line, index) => {
      if (line.trim() !== '') this.readLine(source, index + 1, line);
    });
  }

  /** An event kept outside any journal (the inbox's earlier one-file-per-event layout). */
  addEvent(event: WebhookEvent, claimed: boolean, line = acceptRecord(event), source: string | null = null): void {
    if (this.accepted.has(event.id)) return;
    this.accepted.set(event.id, { event, line, claimed: false, source });
    if (claimed) this.claimed.add(event.id);
  }

  state(): JournalState {
    const entries = [...this.accepted.values()]
      .filter((entry) => !this.done.has(entry.event.id))
      .map((entry) => ({ ...entry, claimed: this.claimed.has(entry.event.id) }));
    const deliveries = [...this.deliveries].map(([key, atMs]) => ({ key, atMs })).sort((a, b) => a.atMs - b.atMs);
    return { entries, damaged: this.damaged, torn: this.torn, deliveries };
  }

  private noteDelivery(key: string, atMs: number): void {
    if (!Number.isFinite(atMs)) return;
    this.deliveries.set(key, Math.max(atMs, this.deliveries.get(key) ?? -Infinity));
  }

  private readLine(source: string, lineNumber: number, line: string): void {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (error) {
      this.damaged.push({ source, lineNumber, line, problem: `it is not valid JSON (${(error as Error).message})` });
      return;
    }
    if (isJsonObject(record) && typeof record.claim === 'string') this.claimed.add(record.claim);
    else if (isJsonObject(record) && typeof record.done === 'string') this.done.add(record.done);
    else if (isJsonObject(record) && typeof record.seen === 'string' && typeof record.at === 'number') this.noteDelivery(record.seen, record.at);
    else if (isJsonObject(record) && 'accept' in record) {
      const problem = eventProblem(record.accept);
      if (problem !== null) this.damaged.push({ source, lineNumber, line, problem });
      else {
        const event = record.accept as WebhookEvent;
        this.addEvent(event, false, `${line}\n`, source);
        if (typeof record.key === 'string') this.noteDelivery(record.key, Date.parse(event.receivedAt));
      }
    } else {
      this.damaged.push({ source, lineNumber, line, problem: 'it is not an accept, claim or done record' });
    }
  }
}

/** What makes `value` not a stored WebhookEvent, or null when it is one. */
export function eventProblem(value: unknown): string | null {
  if (!isJsonObject(value)) return 'it is not a JSON object';
  for (const field of ['id', 'route', 'event', 'deliveryId', 'receivedAt'] as const) {
    if (typeof value[field] !== 'string') return `its "${field}" is not a string`;
  }
  if (!isJsonObject(value.payload)) return 'its "payload" is not an object';
  return null;
}
