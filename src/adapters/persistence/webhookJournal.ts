import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import { scanLines, type RecordFile } from './journalLines.js';
import { NewestDeliveries } from './NewestDeliveries.js';

/**
 * The webhook inbox's journal format (one JSON object per line, UTF-8):
 *
 *     {"accept":{…the WebhookEvent…}}   the event was accepted (its 202 waited for this line)
 *     {"claim":"<event id>"}            a run of it started
 *     {"done":"<event id>"}             its run ended; it is never handed out again
 *     {"seen":"<delivery key>","at":ms} a delivery accepted at `at`, remembered for an hour
 *     {"close":"<group id>","members":[…]} a group of coalesced events was handed out as one
 *                                       run: these events, whatever is accepted later
 *
 * An accept record of a delivery the sender named carries its idempotency key as `"key"`;
 * `seen` records carry the keys of events already done across a rewrite of the journal.
 * Blank lines are slack (space kept for records to come) and mean nothing.
 *
 * An accept record holds the event's other fields before its payload, and its key after it, so
 * that the journal can be indexed (id, route, key, time) from the ends of each line without parsing
 * payloads; records written with the payload elsewhere (by earlier versions) are parsed whole.
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
 * The accept record of `event`: its fields, then its payload, then `deliveryKey`. With
 * `payloadJson`, the text its payload was parsed from, that text is written in place of the
 * payload encoded again, when it fits on the record's line.
 */
export function acceptRecord(event: WebhookEvent, payloadJson?: string, deliveryKey?: string): string {
  const { payload, ...envelope } = event;
  const payloadText = payloadJson === undefined || payloadJson.includes('\n') ? JSON.stringify(payload) : payloadJson.trim();
  const accept = `${JSON.stringify(envelope).slice(0, -1)},"payload":${payloadText}}`;
  return `{"accept":${accept}${deliveryKey === undefined ? '' : `,"key":${JSON.stringify(deliveryKey)}`}}\n`;
}
export const claimRecord = (eventId: string): string => `{"claim":${JSON.stringify(eventId)}}\n`;
export const doneRecord = (eventId: string): string => `{"done":${JSON.stringify(eventId)}}\n`;
export const closeRecord = (groupId: string, memberIds: readonly string[]): string =>
  `{"close":${JSON.stringify(groupId)},"members":${JSON.stringify(memberIds)}}\n`;
export const seenRecord = (deliveryKey: string, atMs: number): string => `{"seen":${JSON.stringify(deliveryKey)},"at":${atMs}}\n`;

/** The event of an accept record (its bytes as read back), or what keeps them from being one. */
export function eventOfAcceptRecord(bytes: Buffer): { event: WebhookEvent; problem: null } | { event: null; problem: string } {
  let record: unknown;
  try {
    record = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return { event: null, problem: `it is not valid JSON (${(error as Error).message})` };
  }
  if (!isJsonObject(record) || !('accept' in record)) return { event: null, problem: 'it is not an accept record' };
  const problem = eventProblem(record.accept);
  return problem === null ? { event: record.accept as WebhookEvent, problem: null } : { event: null, problem };
}

/** What one journal line says; an accept is read without its payload. */
export type JournalLine =
  /** `receivedAtMs` is read only when there is a key to remember (NaN otherwise). */
  | {
      kind: 'accept';
      id: string;
      route: string;
      key: string | null;
      receivedAtMs: number;
      /** Only for an event of a coalescing route (whose record is parsed whole: its envelope holds an object). */
      coalesce?: { key: string; windowMs: number };
    }
  | { kind: 'close'; id: string; members: string[] }
  | { kind: 'claim'; id: string }
  | { kind: 'done'; id: string }
  | { kind: 'seen'; key: string; atMs: number }
  | { kind: 'blank' }
  | { kind: 'damaged'; problem: string };

const BLANK: JournalLine = { kind: 'blank' };
const ACCEPT_START = Buffer.from('{"accept":{');
const KEY_FIELD = Buffer.from('},"key":');
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
/** The fields of an accept record before its payload, which every stored event has. */
const ENVELOPE_FIELDS = ['id', 'route', 'event', 'deliveryId', 'receivedAt'] as const;

/**
 * Reads the line `bytes[start, stop)`. An accept record as `acceptRecord` writes it is read from
 * its ends: the fields before the payload, and the key after it; the payload is only checked to
 * begin as an object (it is parsed when the event is handed out). Anything else is parsed whole.
 */
export function readJournalLine(bytes: Buffer, start: number, stop: number): JournalLine {
  if (stop === start) return BLANK;
  if (bytes.compare(ACCEPT_START, 0, ACCEPT_START.length, start, Math.min(stop, start + ACCEPT_START.length)) === 0) {
    const accept = acceptFromItsEnds(bytes, start, stop);
    if (accept !== null) return accept;
  }
  const text = bytes.toString('utf8', start, stop);
  if (text.trim() === '') return BLANK;
  return parsedLine(text);
}

/**
 * The accept of a record laid out as `acceptRecord` writes it (its fields plain strings, without
 * escapes, before its payload), or null when it is not: parse it whole then. Only the id, the
 * route and, with a key, the time are decoded; the strings are found by their quotes, which a
 * string without a backslash holds only at its ends. The last `},"key":` is the record's own,
 * as a key holds no bare quote.
 */
function acceptFromItsEnds(bytes: Buffer, start: number, stop: number): JournalLine | null {
  // Plain loops over the bytes: this runs for every line of every journal read at start-up, and
  // the envelope is short, so calls into Buffer's native methods would cost more than the work.
  const found = FOUND;
  found.fill(-1);
  let at = start + ACCEPT_START.length;
  for (;;) {
    if (bytes[at] !== QUOTE) return null;
    const nameEnd = plainStringEnd(bytes, at + 1, stop);
    if (nameEnd === -1 || bytes[nameEnd + 1] !== COLON) return null;
    const field = fieldNamed(bytes, at + 1, nameEnd);
    const valueAt = nameEnd + 2;
    if (field === PAYLOAD) {
      if (bytes[valueAt] !== OPEN_BRACE) return null;
      break;
    }
    if (bytes[valueAt] !== QUOTE) return null;
    const valueEnd = plainStringEnd(bytes, valueAt + 1, stop);
    if (valueEnd === -1 || bytes[valueEnd + 1] !== COMMA) return null;
    if (field !== -1) {
      found[2 * field] = valueAt + 1;
      found[2 * field + 1] = valueEnd;
    }
    at = valueEnd + 2;
  }
  for (const position of found) if (position === -1) return null;
  if (bytes[stop - 1] !== CLOSE_BRACE) return null;
  const id = bytes.toString('utf8', found[0], found[1]);
  const route = bytes.toString('utf8', found[2], found[3]);
  if (bytes[stop - 2] === CLOSE_BRACE) return { kind: 'accept', id, route, key: null, receivedAtMs: NaN };
  if (bytes[stop - 2] !== QUOTE) return null;
  const keyAt = bytes.lastIndexOf(KEY_FIELD, stop - 1);
  if (keyAt < at) return null;
  let key: unknown;
  try {
    key = JSON.parse(bytes.toString('utf8', keyAt + KEY_FIELD.length, stop - 1));
  } catch {
    return null;
  }
  if (typeof key !== 'string') return null;
  return { kind: 'accept', id, route, key, receivedAtMs: Date.parse(bytes.toString('utf8', found[8], found[9])) };
}

/** Scratch space of `acceptFromItsEnds`: where each envelope field's value lies, at 2i and 2i+1 for ENVELOPE_FIELDS[i]. */
const FOUND = new Int32Array(2 * ENVELOPE_FIELDS.length);
/** The envelope's field names, then `payload`, as bytes. */
const FIELD_NAMES = [...ENVELOPE_FIELDS, 'payload'].map((name) => Buffer.from(name, 'latin1'));
const PAYLOAD = ENVELOPE_FIELDS.length;

/** Where the JSON string whose text begins at `from` ends (its closing quote), or -1 when it has an escape or does not end before `stop`. */
function plainStringEnd(bytes: Buffer, from: number, stop: number): number {
  for (let at = from; at < stop; at += 1) {
    const byte = bytes[at];
    if (byte === QUOTE) return at;
    if (byte === BACKSLASH) return -1;
  }
  return -1;
}

/** The index in FIELD_NAMES of the name `bytes[start, end)`, or -1. */
function fieldNamed(bytes: Buffer, start: number, end: number): number {
  const length = end - start;
  for (let field = 0; field < FIELD_NAMES.length; field += 1) {
    const name = FIELD_NAMES[field]!;
    if (name.length !== length) continue;
    let same = 0;
    while (same < length && bytes[start + same] === name[same]) same += 1;
    if (same === length) return field;
  }
  return -1;
}

function parsedLine(text: string): JournalLine {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch (error) {
    return { kind: 'damaged', problem: `it is not valid JSON (${(error as Error).message})` };
  }
  if (!isJsonObject(record)) return { kind: 'damaged', problem: 'it is not an accept, claim or done record' };
  if (typeof record.claim === 'string') return { kind: 'claim', id: record.claim };
  if (typeof record.done === 'string') return { kind: 'done', id: record.done };
  if (typeof record.seen === 'string' && typeof record.at === 'number') return { kind: 'seen', key: record.seen, atMs: record.at };
  if (typeof record.close === 'string' && Array.isArray(record.members) && record.members.every((id) => typeof id === 'string'))
    return { kind: 'close', id: record.close, members: record.members as string[] };
  if ('accept' in record) {
    const problem = eventProblem(record.accept);
    if (problem !== null) return { kind: 'damaged', problem };
    const event = record.accept as WebhookEvent;
    return {
      kind: 'accept',
      id: event.id,
      route: event.route,
      key: typeof record.key === 'string' ? record.key : null,
      receivedAtMs: Date.parse(event.receivedAt),
      ...(coalesceProblem(event.coalesce) ? {} : { coalesce: event.coalesce }),
    };
  }
  return { kind: 'damaged', problem: 'it is not an accept, claim or done record' };
}

/** Whether `value` is not the `coalesce` of a stored event (absent counts as not one). */
function coalesceProblem(value: unknown): boolean {
  return !isJsonObject(value) || typeof value.key !== 'string' || typeof value.windowMs !== 'number';
}

/** A line that is no record: kept aside by the caller, skipped here. */
export interface DamagedLine {
  source: string;
  lineNumber: number;
  line: string;
  problem: string;
}

/**
 * Indexes journals read one after the other: an event is pending when some journal accepted it
 * and none marked it done. An event found twice (a crash in the middle of taking over a journal
 * left it in two) counts once, in its first place. What is kept per pending event is what
 * `place` makes of where its accept record lies (its position and length, newline included)
 * and its route, never the record; a journal is read in chunks, so reading holds one chunk
 * however large it is.
 */
export class JournalIndex<Place> {
  /** The pending events, in the order their accepts were read. */
  readonly pending = new Map<string, Place>();
  readonly damaged: DamagedLine[] = [];
  /** Journals whose last line was cut short (an append interrupted, which nobody was told had succeeded). */
  readonly torn: string[] = [];
  /** The pending events of coalescing routes (few: only their records are parsed whole), in the order read. */
  readonly coalesced = new Map<string, { route: string; receivedAtMs: number; coalesce: { key: string; windowMs: number } }>();
  /** The groups of coalesced events handed out as one run each: their members. */
  readonly closedGroups = new Map<string, string[]>();
  private readonly claimed = new Set<string>();
  private readonly done = new Set<string>();
  private readonly recent: NewestDeliveries | null;

  /**
   * With `deliveries`, the index keeps the newest `limit` delivery keys found that were accepted
   * in the window `keep` accepts (see `deliveries()`); without, it keeps none.
   */
  constructor(
    deliveries?: { keep: (atMs: number) => boolean; limit: number },
    /** Hears of each entry made by `place` and then let go (its event was found done). */
    private readonly dropped: (place: Place) => void = () => undefined,
  ) {
    this.recent = deliveries === undefined ? null : new NewestDeliveries(deliveries.keep, deliveries.limit);
  }

  /**
   * Reads the first `end` bytes of `file` (its intact records; `torn` when a cut-short record
   * follows them), named `source` in reports; `place` makes the index entry of each accept.
   */
  async read(
    source: string,
    file: RecordFile,
    end: number,
    torn: boolean,
    place: (position: number, length: number, route: string) => Place,
  ): Promise<void> {
    if (torn) this.torn.push(source);
    let lineNumber = 0;
    await scanLines(file, end, (bytes, start, stop, position) => {
      lineNumber += 1;
      const line = readJournalLine(bytes, start, stop);
      switch (line.kind) {
        case 'accept':
          if (!this.pending.has(line.id) && !this.done.has(line.id))
            this.pending.set(line.id, place(position, stop - start + 1, line.route));
          if (line.key !== null) this.recent?.add(line.key, line.receivedAtMs);
          if (line.coalesce !== undefined && !this.done.has(line.id))
            this.coalesced.set(line.id, { route: line.route, receivedAtMs: line.receivedAtMs, coalesce: line.coalesce });
          break;
        case 'close':
          this.closedGroups.set(line.id, line.members);
          break;
        case 'claim':
          if (!this.done.has(line.id)) this.claimed.add(line.id);
          break;
        case 'done': {
          this.done.add(line.id);
          const place = this.pending.get(line.id);
          if (place !== undefined) {
            this.pending.delete(line.id);
            this.dropped(place);
          }
          this.claimed.delete(line.id);
          this.coalesced.delete(line.id);
          break;
        }
        case 'seen':
          this.recent?.add(line.key, line.atMs);
          break;
        case 'damaged':
          this.damaged.push({ source, lineNumber, line: bytes.toString('utf8', start, stop), problem: line.problem });
          break;
        case 'blank':
          break;
      }
    });
  }

  /** The delivery keys kept (see the constructor), oldest first, with when each was accepted. */
  deliveries(): Array<{ key: string; atMs: number }> {
    return this.recent?.oldestFirst() ?? [];
  }

  /** Whether `id` was accepted (pending or done) in the journals read. */
  knows(id: string): boolean {
    return this.pending.has(id) || this.done.has(id);
  }

  /** Whether a run of the pending event `id` started and did not end. */
  isClaimed(id: string): boolean {
    return this.claimed.has(id);
  }
}

/** What makes `value` not a stored WebhookEvent, or null when it is one. */
export function eventProblem(value: unknown): string | null {
  const problem = envelopeProblem(value);
  if (problem !== null) return problem;
  if (!isJsonObject((value as { payload?: unknown }).payload)) return 'its "payload" is not an object';
  return null;
}

/** What makes `value` not the fields of a stored WebhookEvent besides its payload, or null. */
function envelopeProblem(value: unknown): string | null {
  if (!isJsonObject(value)) return 'it is not a JSON object';
  for (const field of ENVELOPE_FIELDS) {
    if (typeof value[field] !== 'string') return `its "${field}" is not a string`;
  }
  return null;
}
