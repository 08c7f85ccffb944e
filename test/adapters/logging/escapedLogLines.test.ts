import { Writable } from 'node:stream';
import { ConsoleLogger } from '../../../src/adapters/logging/ConsoleLogger.js';
import { WinstonLogger } from '../../../src/adapters/logging/WinstonLogger.js';

function capture(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return { stream, text: () => text };
}

const ANSWER = 'First line of the answer\nsecond line\r\nthird line\rend';
const ANSWER_ESCAPED = 'First line of the answer\\nsecond line\\r\\nthird line\\rend';

describe('a text log line never spans lines', () => {
  it('ConsoleLogger writes line breaks in the message as \\n and \\r', () => {
    const out = capture();
    const logger = new ConsoleLogger(out.stream, 'debug');

    logger.warn(ANSWER, { job: 'abc\ndef' });

    expect(out.text()).toBe(`warn: ${ANSWER_ESCAPED} {"job":"abc\\ndef"}\n`);
  });

  it('WinstonLogger (text) writes line breaks in the message and in field values escaped, one line per entry', async () => {
    const out = capture();
    const logger = new WinstonLogger('text', 'info', out.stream);

    logger.info(ANSWER, { answer: 'a\nb' });
    logger.error('second entry');
    await logger.flush();

    const lines = out.text().split('\n').slice(0, -1);
    expect(lines).toEqual([
      expect.stringMatching(/^\S+Z info First line of the answer\\nsecond line\\r\\nthird line\\rend \{"answer":"a\\nb"\}$/),
      expect.stringMatching(/^\S+Z error second entry$/),
    ]);
  });

  it('WinstonLogger (json) keeps one JSON object per line with the message intact', async () => {
    const out = capture();
    const logger = new WinstonLogger('json', 'info', out.stream);

    logger.info(ANSWER);
    await logger.flush();

    const lines = out.text().split('\n').slice(0, -1);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'info', message: ANSWER });
  });
});

/** What a forged token's `kid` or a platform's garbage answer may carry: colours, a window title, a NUL, DEL and C1. */
const HOSTILE = 'kid \u001b[31m \u001b]0;pwned\u0007 nul\u0000 del\u007f csi\u009b2J nel\u0085';
const HOSTILE_ESCAPED = 'kid \\u001b[31m \\u001b]0;pwned\\u0007 nul\\u0000 del\\u007f csi\\u009b2J nel\\u0085';
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('a log line never carries a control character to the terminal', () => {
  it('ConsoleLogger escapes C0, DEL and C1 in the message and in the fields', () => {
    const out = capture();
    const logger = new ConsoleLogger(out.stream, 'debug');

    logger.warn(`fire refused: ${HOSTILE}`, { job: HOSTILE });

    expect(out.text()).toBe(`warn: fire refused: ${HOSTILE_ESCAPED} {"job":"${HOSTILE_ESCAPED}"}\n`);
  });

  it('WinstonLogger (text) escapes C0, DEL and C1 in the message and in the fields', async () => {
    const out = capture();
    const logger = new WinstonLogger('text', 'info', out.stream);

    logger.warn(`fire refused: ${HOSTILE}`, { job: HOSTILE });
    await logger.flush();

    expect(out.text()).not.toMatch(CONTROL);
    expect(out.text()).toMatch(/^\S+Z warn fire refused: (.+) \{"job":"(.+)"\}\n$/);
    expect(out.text()).toContain(`fire refused: ${HOSTILE_ESCAPED} {"job":"${HOSTILE_ESCAPED}"}`);
  });

  it('WinstonLogger (json) writes DEL and C1 as \\u escapes too, and the line reads back as the same values', async () => {
    const out = capture();
    const logger = new WinstonLogger('json', 'info', out.stream);

    logger.warn(`fire refused: ${HOSTILE}`, { job: HOSTILE });
    await logger.flush();

    expect(out.text()).not.toMatch(CONTROL);
    expect(out.text()).toContain(HOSTILE_ESCAPED);
    const lines = out.text().split('\n').slice(0, -1);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', message: `fire refused: ${HOSTILE}`, job: HOSTILE });
  });
});
