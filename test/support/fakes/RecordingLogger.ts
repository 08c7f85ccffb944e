import type { Logger } from '../../../src/application/ports/Logger.js';

export class RecordingLogger implements Logger {
  readonly entries: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];

  debug(message: string, fields?: Record<string, unknown>): void {
    this.entries.push({ level: 'debug', message, fields });
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.entries.push({ level: 'info', message, fields });
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.entries.push({ level: 'warn', message, fields });
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.entries.push({ level: 'error', message, fields });
  }
}
