import type { Readable, Writable } from 'node:stream';
import { CRON_RUN_VARIABLE } from '../../domain/cronRunGuard.js';
import { cronRunAmongAncestors, insideAgentSandbox } from '../process/cronRunAncestry.js';

/** The terminal a command talks to; tests give it strings. */
export interface CliIO {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  /** Whether a person is at the keyboard (stdin and stdout are terminals). */
  interactive: boolean;
  /** Whether to colour output: a terminal, and NO_COLOR unset. */
  color: boolean;
  /**
   * The id of the job whose cron run started this process or one of its ancestors (AGENT_CRON_RUN
   * here, or in an ancestor's starting environment), if any: such a process may look at jobs but
   * not change them, and fires no due jobs.
   */
  cronRun?: string | null;
  /**
   * Whether this process runs in the agent's sandbox, where the job store is hidden: like a cron
   * run, it may look at jobs but not change them, and fires no due jobs.
   */
  sandboxed?: boolean;
}

export function systemIO(env: NodeJS.ProcessEnv): CliIO {
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  quietWhenClosed(process.stdout);
  quietWhenClosed(process.stderr);
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    interactive,
    color: Boolean(process.stdout.isTTY) && env.NO_COLOR === undefined,
    cronRun: env[CRON_RUN_VARIABLE] || cronRunAmongAncestors(),
    sandboxed: insideAgentSandbox(),
  };
}

/** Write errors of a reader that went away (`agent cron list | head -1`). */
const CLOSED_READER = new Set(['EPIPE', 'ERR_STREAM_DESTROYED', 'ECONNRESET']);

/**
 * A reader that stops reading (`| head`) is not a failure of the command: what is still written
 * is dropped and the command finishes its work (a job it started still gets its run recorded)
 * instead of dying with a stack trace from an unhandled 'error' event. Any other write error
 * (a full disk behind `> file`) is reported on stderr and fails the command.
 */
export function quietWhenClosed(stream: Writable): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (CLOSED_READER.has(error.code ?? '')) return;
    process.exitCode = 1;
    if (stream !== process.stderr && process.stderr.writable) {
      process.stderr.write(`error: could not write the output (${error.code ?? error.message}); check where it goes.\n`);
    }
  });
}

export function writeLine(stream: Writable, text = ''): void {
  stream.write(`${text}\n`);
}

/** What `--json` prints: one JSON document, indented, on its own lines. */
export function writeJson(stream: Writable, value: unknown): void {
  writeLine(stream, JSON.stringify(value, null, 2));
}

/** The `--json` flag of a command that prints a result; `what` says what it prints. */
export function jsonFlag(what: string) {
  return { type: 'boolean', default: false, describe: `Print ${what} as JSON` } as const;
}

/** Everything a stream gives until it ends, as text. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}
