import type { Writable } from 'node:stream';
import { LevelLogger, type LogLevel } from './LevelLogger.js';
import { oneLine } from './oneLine.js';

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/**
 * The command line's logger: one readable line per entry on stderr, from `minimum` up (a line
 * break inside the message is written `\n`; the fields are JSON, which escapes its own). The
 * gateway logs through winston instead; a CLI command stays light to start.
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
    this.stream.write(`${level === 'info' ? '' : `${level}: `}${oneLine(message)}${detail}\n`);
  }
}
