import type { Logger } from '../../application/ports/Logger.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The four Logger methods, each handing its entry to `write` with its level. */
export abstract class LevelLogger implements Logger {
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

  protected abstract write(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}
