import { escapeControlCharacters, printableLines } from '../../src/domain/controlCharacters.js';
import { renderRunReport } from '../../src/domain/RunReport.js';
import { parseSchedule } from '../../src/domain/Schedule.js';
import { renderWebhookRunRecord } from '../../src/domain/webhook/webhookRunRecord.js';

const ESC = '\u001b';

describe('escapeControlCharacters', () => {
  it('writes line breaks and tabs as \\n, \\r and \\t', () => {
    expect(escapeControlCharacters('one\ntwo\r\nthree\tfour')).toBe('one\\ntwo\\r\\nthree\\tfour');
  });

  it('writes every other C0 character, DEL and every C1 character as \\u00xx in lowercase hex', () => {
    expect(escapeControlCharacters(`${ESC}[31mred${ESC}[0m`)).toBe('\\u001b[31mred\\u001b[0m');
    expect(escapeControlCharacters(`${ESC}]0;pwned\u0007`)).toBe('\\u001b]0;pwned\\u0007');
    expect(escapeControlCharacters('a\u0000b\u007fc\u0080d\u009be\u009f')).toBe('a\\u0000b\\u007fc\\u0080d\\u009be\\u009f');
  });

  it('leaves nothing of the ranges U+0000–U+001F, U+007F and U+0080–U+009F', () => {
    const all = Array.from({ length: 0xa0 }, (_, code) => String.fromCharCode(code)).join('');

    const escaped = escapeControlCharacters(all);

    expect(escaped).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(escaped).toContain(' !"#$%&');
    expect(escaped).toContain('xyz{|}~');
  });

  it('leaves text without control characters unchanged, backslashes, accents and emoji included', () => {
    const text = 'C:\\jobs\\report — déjà vu ✓ 🚀 \u00a0non-breaking';

    expect(escapeControlCharacters(text)).toBe(text);
  });

  it('keeps the characters it is told to keep, for formats that have lines', () => {
    expect(escapeControlCharacters(`first\n\tsecond${ESC}[2J\r`, '\n\t')).toBe('first\n\tsecond\\u001b[2J\\r');
  });

  it('is the inverse of JSON parsing for the characters it escapes', () => {
    const text = `kid ${ESC}[31m ${ESC}]0;title\u0007 \u0000 \u0085 \n`;

    expect(JSON.parse(`"${escapeControlCharacters(text)}"`)).toBe(text);
  });
});

describe('printableLines', () => {
  it('keeps line ends and tabs, makes a CRLF a line end and escapes every other control character', () => {
    expect(printableLines(`one\r\ntwo\tcols\n${ESC}[2J\u0000\u0085\rend`)).toBe('one\ntwo\tcols\n\\u001b[2J\\u0000\\u0085\\rend');
  });
});

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('run reports and records', () => {
  const job = {
    id: 'a1b2c3d4e5f6',
    name: 'Digest',
    prompt: `Summarise ${ESC}[31m`,
    schedule: parseSchedule('every 1h', new Date('2026-06-01T09:00:00Z'), 'UTC'),
  };

  it('a cron run report holds no control character from the prompt, the answer, the error or the delivery error', () => {
    const report = renderRunReport({
      job,
      startedAt: new Date('2026-06-01T09:00:05Z'),
      timeZone: 'UTC',
      status: 'delivery_failed',
      response: `All ${ESC}]0;title\u0007 quiet\u0000`,
      error: 'model said \u009b',
      deliveryError: 'telegram: \u0000garbage',
    });

    expect(report).not.toMatch(CONTROL);
    expect(report).toContain('All \\u001b]0;title\\u0007 quiet\\u0000');
  });

  it('a webhook run record holds none from the payload, the answer or the delivery id', () => {
    const record = renderWebhookRunRecord({
      eventId: 'e1',
      route: 'alerts',
      event: 'alert',
      deliveryId: `evt_${ESC}[1m`,
      receivedAt: '2026-06-01T09:00:00.000Z',
      startedAt: '2026-06-01T09:00:01.000Z',
      outcome: 'delivery_failed',
      deliveredTo: null,
      prompt: `Alert: ${ESC}[31mdisk full\u0000`,
      error: 'delivery to slack failed: \u0007',
      answer: 'Line one\r\nLine two\twith a tab',
    });

    expect(record).not.toMatch(CONTROL);
    expect(record).toContain('Line one\nLine two\twith a tab');
    expect(record).toContain('evt_\\u001b[1m');
  });
});

describe('a job run that ends', () => {
  it('stores its error and its delivery error without control characters but line ends and tabs', async () => {
    const { createJob } = await import('../../src/domain/Job.js');
    const { finishRun } = await import('../../src/domain/jobLifecycle.js');
    const now = new Date('2026-06-01T09:00:00Z');
    const job = createJob({ id: 'a1b2c3d4e5f6', prompt: 'Check', schedule: parseSchedule('every 1h', now, 'UTC') }, now, 'UTC');

    const failed = finishRun(job, { status: 'error', error: `model said ${ESC}[31mno\u0000` }, now);
    const undelivered = finishRun(job, { status: 'delivery_failed', deliveryError: 'telegram: \u0007garbage\nslack: refused' }, now);

    expect(failed.last_error).toBe('model said \\u001b[31mno\\u0000');
    expect(undelivered.last_delivery_error).toBe('telegram: \\u0007garbage\nslack: refused');
  });
});
