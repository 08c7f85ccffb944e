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

/** What the composition adds for traces (docs/traces.md): the run's trace id while one is current. */
describe('fields added to every log line while they apply', () => {
  it('ConsoleLogger writes them beside the caller’s own, which win, and nothing when they do not apply', () => {
    const out = capture();
    const logger = new ConsoleLogger(out.stream, 'debug');
    let current: string | null = 'trace-1';
    logger.addFields(() => (current === null ? null : { trace_id: current }));
    logger.addFields(() => null);

    logger.warn('run failed', { job: 'abc' });
    logger.info('mine wins', { trace_id: 'own' });
    current = null;
    logger.info('outside any run');

    expect(out.text()).toBe('warn: run failed {"trace_id":"trace-1","job":"abc"}\nmine wins {"trace_id":"own"}\noutside any run\n');
  });

  it('WinstonLogger (JSON) gives them as fields of the entry', async () => {
    const out = capture();
    const logger = new WinstonLogger('json', 'info', out.stream);
    logger.addFields(() => ({ trace_id: '0af7651916cd43dd8448eb211c80319c' }));

    logger.info('webhook accepted', { route: 'github' });
    await logger.flush();

    expect(JSON.parse(out.text())).toMatchObject({
      message: 'webhook accepted',
      route: 'github',
      trace_id: '0af7651916cd43dd8448eb211c80319c',
    });
  });
});
