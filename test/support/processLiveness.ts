import { readFileSync } from 'node:fs';
// Real time even where a test fakes the global timers (jest.useFakeTimers) for the code it drives.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Whether a process with this pid still runs. A zombie (exited, not yet reaped by whichever
 * ancestor adopted it) counts as gone: it runs no code and holds no resources but its entry.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state letter follows the parenthesised command name, which may itself hold spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * Polls `condition` until it holds or `timeoutMs` passes; returns whether it held. Keep the
 * global Date real when faking timers (`doNotFake: ['Date', …]`), or the deadline never comes.
 */
export async function eventually(condition: () => boolean, timeoutMs = 5000, everyMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (condition()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}
