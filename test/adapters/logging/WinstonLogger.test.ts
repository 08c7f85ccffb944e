import { Writable } from 'node:stream';
import { WinstonLogger } from '../../../src/adapters/logging/WinstonLogger.js';

/** A stream that keeps what is written, line by line. */
function capture(): { stream: Writable; lines: () => string[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return { stream, lines: () => text.split('\n').filter((line) => line !== '') };
}

describe('WinstonLogger', () => {
  it('writes readable text lines: time, level, message, then the fields as JSON', () => {
    const out = capture();
    const logger = new WinstonLogger('text', 'info', out.stream);

    logger.info('webhook accepted', { route: 'ci', event: 'push' });
    logger.error('delivery failed');

    expect(out.lines()).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info webhook accepted \{"route":"ci","event":"push"\}$/),
      expect.stringMatching(/^\S+Z error delivery failed$/),
    ]);
  });

  it('writes one JSON object per line with --log-format json', () => {
    const out = capture();
    new WinstonLogger('json', 'info', out.stream).warn('slow run', { route: 'ci', seconds: 42 });

    const [line] = out.lines();
    expect(JSON.parse(line!)).toEqual({ level: 'warn', message: 'slow run', route: 'ci', seconds: 42, timestamp: expect.any(String) });
  });

  it('leaves out debug entries unless asked for them', () => {
    const quiet = capture();
    new WinstonLogger('text', 'info', quiet.stream).debug('details');
    const chatty = capture();
    new WinstonLogger('text', 'debug', chatty.stream).debug('details');

    expect(quiet.lines()).toEqual([]);
    expect(chatty.lines()).toEqual([expect.stringMatching(/ debug details$/)]);
  });

  it('masks fields whose names look secret, and never lets a field replace the level or the message', () => {
    const out = capture();
    new WinstonLogger('json', 'info', out.stream).info('configured', {
      secret: 's3cret',
      api_key: 'k',
      Authorization: 'Bearer x',
      signature: 'sha256=00',
      route: 'ci',
      level: 'error',
      message: 'forged',
    });

    expect(JSON.parse(out.lines()[0]!)).toMatchObject({
      level: 'info',
      message: 'configured',
      secret: '[hidden]',
      api_key: '[hidden]',
      Authorization: '[hidden]',
      signature: '[hidden]',
      route: 'ci',
    });
  });

  it('flushes at once when nothing waits, and only after the drain when the stream is backed up', async () => {
    const out = capture();
    const logger = new WinstonLogger('text', 'info', out.stream);
    logger.info('one');
    await logger.flush();
    expect(out.lines()).toHaveLength(1);

    const pending: Array<() => void> = [];
    const slow = new Writable({ highWaterMark: 1, write: (_chunk, _encoding, done) => pending.push(done) });
    const backedUp = new WinstonLogger('text', 'info', slow);
    backedUp.info('two');
    let flushed = false;
    const flushing = backedUp.flush().then(() => (flushed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushed).toBe(false);

    pending.shift()!();
    await flushing;
    expect(flushed).toBe(true);
  });
});
