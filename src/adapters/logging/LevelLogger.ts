import type { Logger } from '../../application/ports/Logger.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Fields that every line gets while they apply (the trace id of the run under way); null when none does. */
export type LineFields = () => Record<string, unknown> | null;

/** The four Logger methods, each handing its entry to `write` with its level. */
export abstract class LevelLogger implements Logger {
  private readonly added = new Set<LineFields>();

  debug(message: string, fields?: Record<string, unknown>): void {
    this.write('debug', message, this.withAdded(fields));
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.write('info', message, this.withAdded(fields));
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.write('warn', message, this.withAdded(fields));
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.write('error', message, this.withAdded(fields));
  }

  /** From now on every line also gets what `fields` gives when it is written; the caller's own fields win. Once per source. */
  addFields(fields: LineFields): void {
    this.added.add(fields);
  }

  private withAdded(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    if (this.added.size === 0) return fields;
    let all = fields;
    for (const source of this.added) {
      const more = source();
      if (more !== null) all = { ...more, ...all };
    }
    return all;
  }

  protected abstract write(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}
