import { acceptRecord, readJournalLine } from '../../src/adapters/persistence/webhookJournal.js';
import type { WebhookEvent } from '../../src/domain/webhook/WebhookEvent.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';

/** What `readJournalLine` says of `line` (without its newline), read from the middle of a larger buffer as a journal scan does. */
function read(line: string) {
  const bytes = Buffer.from(`{"done":"before"}\n${line}\n{"done":"after"}\n`);
  const start = bytes.indexOf('\n') + 1;
  return readJournalLine(bytes, start, bytes.indexOf('\n', start));
}
const record = (event: WebhookEvent, payloadJson?: string, key?: string) => acceptRecord(event, payloadJson, key).slice(0, -1);
const at = Date.parse('2026-06-01T08:00:00.000Z');

describe('the webhook journal lines', () => {
  it('reads the id, route, key and time of an accept record whatever its payload holds', () => {
    const tricky = {
      payload: { a: '},"key":"not-it"}', nested: { payload: { key: 'x' } }, '"payload"': 1 },
      key: 'quoted "key" \\ here',
      ends: { x: ['"}'] },
    };
    const event = anEvent(1, { payload: tricky });

    expect(read(record(event, JSON.stringify(tricky), 'github:d-"1"'))).toEqual({
      kind: 'accept',
      id: 'event-1',
      route: 'pr-review',
      key: 'github:d-"1"',
      receivedAtMs: at,
    });
    expect(read(record(event))).toMatchObject({ kind: 'accept', id: 'event-1', route: 'pr-review', key: null });
  });

  it('reads whole the records it cannot read from their ends: fields with escapes, and the layout of earlier versions', () => {
    const escaped = anEvent(2, { id: 'event-"2"', route: 'r\u00e9\\sum\u00e9' });
    const earlierLayout = `{"accept":${JSON.stringify(anEvent(3))},"key":"github:d-3"}`;

    expect(read(record(escaped, undefined, 'k'))).toEqual({
      kind: 'accept',
      id: 'event-"2"',
      route: 'r\u00e9\\sum\u00e9',
      key: 'k',
      receivedAtMs: at,
    });
    expect(read(earlierLayout)).toEqual({ kind: 'accept', id: 'event-3', route: 'pr-review', key: 'github:d-3', receivedAtMs: at });
  });

  it('reads claims, completions, remembered deliveries and blank lines, and says what is wrong with anything else', () => {
    expect(read('{"claim":"event-1"}')).toEqual({ kind: 'claim', id: 'event-1' });
    expect(read('{"done":"event-1"}')).toEqual({ kind: 'done', id: 'event-1' });
    expect(read('{"seen":"github:d-1","at":5}')).toEqual({ kind: 'seen', key: 'github:d-1', atMs: 5 });
    expect(read('')).toEqual({ kind: 'blank' });
    expect(read('   ')).toEqual({ kind: 'blank' });
    expect(read('{"accept":{"id":5}}')).toEqual({ kind: 'damaged', problem: 'its "id" is not a string' });
    expect(read('{"accept":{"id":"e","route":"r","event":"e","deliveryId":"d","receivedAt":"t","payload":[1]}}')).toEqual({
      kind: 'damaged',
      problem: 'its "payload" is not an object',
    });
    expect(read('not json')).toMatchObject({ kind: 'damaged', problem: expect.stringMatching(/^it is not valid JSON/) });
  });
});
