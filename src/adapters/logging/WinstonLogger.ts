import { once } from 'node:events';
import winston from 'winston';
import { escapeControlCharacters } from '../../domain/controlCharacters.js';
import { LevelLogger, type LogLevel } from './LevelLogger.js';

export type LogFormat = 'json' | 'text';

/** Where winston's formats leave the finished line (triple-beam's MESSAGE). */
const MESSAGE = Symbol.for('message');
const LEVEL = Symbol.for('level');
const SEVERITY = winston.config.npm.levels;

/**
 * The gateway's logger: one entry per line on stdout, JSON with `--log-format json` (for log
 * collectors) or readable text. Callers never pass secrets or signatures; fields whose names
 * look secret are masked all the same, as a second line of defence.
 *
 * Every control character of a finished line is escaped (`\n`, `\u001b`, `\u009b` …), in
 * either format: one entry stays one line, so a multi-line answer cannot pass for several
 * entries (or forge one), and text from a request, a token or a platform cannot reach a terminal
 * tailing the log as an escape sequence. JSON escapes C0 itself but writes DEL and C1 raw; written
 * as `\u007f`, they stay the same JSON string.
 *
 * winston's formats (timestamp, json, printf) and its npm levels shape every entry; the finished
 * line is then written straight to the stream. A `winston.Logger` would pass it through its
 * object-mode stream pipeline first (a Transform piped into a transport), which measured 14 µs a
 * line against 5.6 µs for the same format and write — at two lines per accepted webhook, a fifth
 * of the webhook accept path's CPU under `npm run bench:webhook`. With one destination and no
 * transports to fan out to, the pipeline bought nothing.
 *
 * The lines of one turn of the event loop are written together at its end (stdout to a file or
 * a pipe is a system call per write, and one per line was another 5 % of a busy listener). A
 * process that exits writes what is left first (`flush`, or the `exit` event); one killed with
 * SIGKILL loses at most the lines of the turn it was killed in.
 */
export class WinstonLogger extends LevelLogger {
  private readonly format: winston.Logform.Format;
  private readonly threshold: number;
  private pending = '';

  constructor(
    format: LogFormat,
    level: 'debug' | 'info' = 'info',
    private readonly stream: NodeJS.WritableStream = process.stdout,
  ) {
    super();
    this.threshold = SEVERITY[level]!;
    this.format =
      format === 'json'
        ? winston.format.combine(winston.format.timestamp(), winston.format.json())
        : winston.format.combine(
            winston.format.timestamp(),
            winston.format.printf(({ timestamp, level: entryLevel, message, ...fields }) => {
              const detail = Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
              return `${String(timestamp)} ${entryLevel} ${String(message)}${detail}`;
            }),
          );
  }

  /** Resolves once every entry written so far has left for the stream's destination. */
  async flush(): Promise<void> {
    this.writePending();
    const stream = this.stream as NodeJS.WritableStream & { writableNeedDrain?: boolean };
    if (stream.writableNeedDrain) await once(stream, 'drain');
  }

  protected write(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
    if (SEVERITY[level]! > this.threshold) return;
    const entry = this.format.transform(entryOf(level, message, fields));
    if (!entry) return;
    if (this.pending === '') {
      setImmediate(() => this.writePending());
      unwritten.add(this);
    }
    this.pending += `${escapeControlCharacters(String((entry as Record<symbol, unknown>)[MESSAGE]))}\n`;
  }

  private writePending(): void {
    unwritten.delete(this);
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    this.stream.write(text);
  }
}

/** Loggers holding lines not yet written; the process writes them before it exits. */
const unwritten = new Set<WinstonLogger>();
process.on('exit', () => {
  for (const logger of unwritten) void logger.flush();
});

const SECRET_FIELD = /(secret|signature|token|password|api_?key|authorization)/i;

/**
 * The object winston's formats take: the fields, masked where their names look secret, then
 * the level and the message, which no field may replace. Built in one object (this runs for
 * every line; a masked copy spread into another was a tenth of what a busy listener allocated).
 */
function entryOf(level: LogLevel, message: string, fields?: Record<string, unknown>): winston.Logform.TransformableInfo {
  const entry: winston.Logform.TransformableInfo = { level, message, [LEVEL]: level };
  if (!fields) return entry;
  for (const name of Object.keys(fields)) {
    if (name === 'level' || name === 'message') continue;
    entry[name] = SECRET_FIELD.test(name) ? '[hidden]' : fields[name];
  }
  return entry;
}
