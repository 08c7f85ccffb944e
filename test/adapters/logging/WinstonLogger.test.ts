import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { WinstonLogger } from '../../../src/adapters/logging/WinstonLogger.js';
import { bundleScript } from '../../support/bundleScript.js';
import { spawn } from '../../support/testProcesses.js';

/** A stream that keeps what is written, line by line, and counts the writes. */
function capture(): { stream: Writable; lines: () => string[]; writes: () => number } {
  let text = '';
  let writes = 0;
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      writes += 1;
      done();
    },
  });
  return { stream, lines: () => text.split('\n').filter((line) => line !== ''), writes: () => writes };
}

describe('WinstonLogger', () => {
  it('writes readable text lines: time, level, message, then the fields as JSON', async () => {
    const out = capture();
    const logger = new WinstonLogger('text', 'info', out.stream);

    logger.info('webhook accepted', { route: 'ci', event: 'push' });
    logger.error('delivery failed');
    await logger.flush();

    expect(out.lines()).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info webhook accepted \{"route":"ci","event":"push"\}$/),
      expect.stringMatching(/^\S+Z error delivery failed$/),
    ]);
  });

  it('writes one JSON object per line with --log-format json', async () => {
    const out = capture();
    const logger = new WinstonLogger('json', 'info', out.stream);
    logger.warn('slow run', { route: 'ci', seconds: 42 });
    await logger.flush();

    const [line] = out.lines();
    expect(JSON.parse(line!)).toEqual({ level: 'warn', message: 'slow run', route: 'ci', seconds: 42, timestamp: expect.any(String) });
  });

  it('leaves out debug entries unless asked for them', async () => {
    const quiet = capture();
    const quietLogger = new WinstonLogger('text', 'info', quiet.stream);
    quietLogger.debug('details');
    const chatty = capture();
    const chattyLogger = new WinstonLogger('text', 'debug', chatty.stream);
    chattyLogger.debug('details');
    await Promise.all([quietLogger.flush(), chattyLogger.flush()]);

    expect(quiet.lines()).toEqual([]);
    expect(chatty.lines()).toEqual([expect.stringMatching(/ debug details$/)]);
  });

  it('masks fields whose names look secret, and never lets a field replace the level or the message', async () => {
    const out = capture();
    const logger = new WinstonLogger('json', 'info', out.stream);
    logger.info('configured', {
      secret: 's3cret',
      api_key: 'k',
      Authorization: 'Bearer x',
      signature: 'sha256=00',
      route: 'ci',
      level: 'error',
      message: 'forged',
    });
    await logger.flush();

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

  it('writes the lines of one turn of the event loop together, at its end', async () => {
    const out = capture();
    const logger = new WinstonLogger('text', 'info', out.stream);
    logger.info('one');
    logger.info('two');
    logger.warn('three');
    expect(out.writes()).toBe(0);

    await new Promise((resolve) => setImmediate(resolve));

    expect(out.writes()).toBe(1);
    expect(out.lines().map((line) => line.split(' ').slice(1).join(' '))).toEqual(['info one', 'info two', 'warn three']);
  });

  it.each([0, 1])('writes its last lines when the process exits in the same turn (exit code %i)', async (code) => {
    const directory = await mkdtemp(join(tmpdir(), 'agent-logger-'));
    try {
      const script = await bundleScript(fileURLToPath(new URL('../../support/logThenExitChild.ts', import.meta.url)), directory);
      const child = spawn(process.execPath, [script, String(code)], { stdio: ['ignore', 'pipe', 'ignore'] });
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      const exitCode = await new Promise((resolve) => child.once('close', resolve));

      expect(exitCode).toBe(code);
      expect(
        stdout
          .trim()
          .split('\n')
          .map((line) => line.split(' ').slice(1).join(' ')),
      ).toEqual(['info first', 'error second {"code":3}']);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('flushes at once when nothing waits, and only after the drain when the stream is backed up', async () => {
    const out = capture();
    const logger = new WinstonLogger('text', 'info', out.stream);
    logger.info('one');
    await logger.flush();
    expect(out.lines()).toHaveLength(1);
    await logger.flush();
    expect(out.writes()).toBe(1);

    const pending: Array<() => void> = [];
    const slow = new Writable({ highWaterMark: 1, write: (_chunk, _encoding, done) => pending.push(done) });
    const backedUp = new WinstonLogger('text', 'info', slow);
    backedUp.info('two');
    backedUp.info('three');
    let flushed = false;
    const flushing = backedUp.flush().then(() => (flushed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushed).toBe(false);

    pending.shift()!();
    await flushing;
    expect(flushed).toBe(true);
  });
});
