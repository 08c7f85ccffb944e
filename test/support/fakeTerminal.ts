import { PassThrough } from 'node:stream';
import type { CliIO } from '../../src/adapters/cli/CliIO.js';

/** A CliIO for driving a command in-process: stdin the test writes to, stdout and stderr it reads. */
export function fakeTerminal(interactive = true) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const io: CliIO = { stdin, stdout, stderr, interactive, color: false };
  return { io, stdin, stdout: () => out, stderr: () => err };
}
