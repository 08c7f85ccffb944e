import winston from 'winston';
import type { Logger } from '../../application/ports/Logger.js';

export type LogFormat = 'json' | 'text';

/**
 * The gateway's logger: winston to stdout, one entry per line, JSON with
 * `--log-format json` (for log collectors) or readable text. Callers never pass secrets or
 * signatures; fields whose names look secret are masked all the same, as a second line of defence.
 */
export class WinstonLogger implements Logger {
  private readonly logger: winston.Logger;

  constructor(format: LogFormat, level: 'debug' | 'info' = 'info', stream: NodeJS.WritableStream = process.stdout) {
    this.logger = winston.createLogger({
      level,
      format:
        format === 'json'
          ? winston.format.combine(winston.format.timestamp(), winston.format.json())
          : winston.format.combine(
              winston.format.timestamp(),
              winston.format.printf(({ timestamp, level: entryLevel, message, ...fields }) => {
                const detail = Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
                return `${String(timestamp)} ${entryLevel} ${String(message)}${detail}`;
              }),
            ),
      transports: [new winston.transports.Stream({ stream })],
    });
  }

  debug(message: string, fields?: Record<string, unknown>): void {
    this.logger.debug(message, masked(fields));
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.logger.info(message, masked(fields));
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.logger.warn(message, masked(fields));
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.logger.error(message, masked(fields));
  }

  /** Resolves once every entry written so far has been flushed. */
  async flush(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.logger.once('finish', resolve);
      this.logger.end();
    });
  }
}

const SECRET_FIELD = /(secret|signature|token|password|api_?key|authorization)/i;

function masked(fields?: Record<string, unknown>): Record<string, unknown> {
  if (!fields) return {};
  const safe: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) safe[name] = SECRET_FIELD.test(name) ? '[hidden]' : value;
  return safe;
}
