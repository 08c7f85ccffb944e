import type { Writable } from 'node:stream';
import { LevelLogger, type LogLevel } from './LevelLogger.js';
import { escapeControlCharacters } from '../../domain/controlCharacters.js';

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/**
 * The command line's logger: one readable line per entry on stderr, from `minimum` up. Every
 * control character in the line is escaped (a line break written `\n`, ESC `\u001b`), in the
 * message and in the fields, which are JSON: a multi-line answer cannot pass for several entries
 * and text from a request or a platform cannot drive the terminal. The gateway logs through
 * winston instead; a CLI command stays light to start.
 */
export class ConsoleLogger extends LevelLogger {
  constructor(
    private readonly stream: Writable,
    private readonly minimum: LogLevel = 'warn',
  ) {
    super();
  }

  protected write(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
    if (LEVELS.indexOf(level) < LEVELS.indexOf(this.minimum)) return;
    const detail = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
    this.stream.write(`${escapeControlCharacters(`${level === 'info' ? '' : `${level}: `}${message}${detail}`)}\n`);
  }
}
