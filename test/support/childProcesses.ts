import type { ChildProcess } from 'node:child_process';
import { spawn } from './testProcesses.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Resolves when `child` has exited (and has been reaped), with what it wrote to stderr. */
export function exitOf(child: ChildProcess): Promise<Exit> {
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

/** Runs `node script ...args` to its end; as the user `as` names, when given (which takes root). */
export function runNode(script: string, args: readonly string[], as?: { uid: number; gid: number }): Promise<Exit> {
  return exitOf(spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'ignore', 'pipe'], ...as }));
}

/** Resolves with the first stdout line of `child`; rejects if it exits first. */
export function firstLineOf(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const end = buffered.indexOf('\n');
      if (end >= 0) resolve(buffered.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before writing a line`)));
  });
}
