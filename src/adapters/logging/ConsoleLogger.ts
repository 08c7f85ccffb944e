import type { Writable } from 'node:stream';
import type { Logger } from '../../application/ports/Logger.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

/**
 * The command line's logger: one readable line per entry on stderr, from `minimum` up. The
 * gateway logs through winston instead; a CLI command stays light to start.
 */
export class ConsoleLogger implements Logger {
  constructor(
    private readonly stream: Writable,
    private readonly minimum: Level = 'warn',
  ) {}

  debug(message: string, fields?: Record<string, unknown>): void {
    this.write('debug', message, fields);
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.write('info', message, fields);
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.write('warn', message, fields);
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.write('error', message, fields);
  }

  private write(level: Level, message: string, fields?: Record<string, unknown>): void {
    if (LEVELS.indexOf(level) < LEVELS.indexOf(this.minimum)) return;
    const detail = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
    this.stream.write(`${level === 'info' ? '' : `${level}: `}${message}${detail}\n`);
  }
}
