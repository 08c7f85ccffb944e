// Run as a child process by WinstonLogger.test.ts: logs two lines to stdout and exits at once,
// in the same turn of the event loop, with the exit code given as the first argument.
import { WinstonLogger } from '../../src/adapters/logging/WinstonLogger.js';

const logger = new WinstonLogger('text', 'info');
logger.info('first');
logger.error('second', { code: 3 });
process.exit(Number(process.argv[2] ?? 0));
