import type { Readable, Writable } from 'node:stream';

/** The terminal a command talks to; tests give it strings. */
export interface CliIO {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  /** Whether a person is at the keyboard (stdin and stdout are terminals). */
  interactive: boolean;
  /** Whether to colour output: a terminal, and NO_COLOR unset. */
  color: boolean;
}

export function systemIO(env: NodeJS.ProcessEnv): CliIO {
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    interactive,
    color: Boolean(process.stdout.isTTY) && env.NO_COLOR === undefined,
  };
}

export function writeLine(stream: Writable, text = ''): void {
  stream.write(`${text}\n`);
}

/** Everything a stream gives until it ends, as text. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}
