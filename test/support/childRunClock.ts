import { jest } from '@jest/globals';
import { PosixProcessTreeKiller } from '../../src/adapters/process/PosixProcessTreeKiller.js';
import type { ProcessTreeKiller } from '../../src/application/ports/ProcessTreeKiller.js';

/**
 * For tests of a timeout or an idle budget of a real child process: the budget runs on a clock
 * that only the test moves, so the child's start-up and the machine's load use none of it.
 *
 * `fakeTheTimers()` fakes setTimeout and setInterval (what runners measure budgets with); Date
 * stays real for `eventually`'s deadline, and the event loop's own queues stay real. The test
 * waits for the child to reach the state it wants (a pid file, a step noted), then moves the
 * clock with `jest.advanceTimersByTime`. The kill that follows needs real time, which
 * {@link killerOnRealTime} gives it back. Call `jest.useRealTimers()` in an afterEach.
 */
export function fakeTheTimers(): void {
  jest.useFakeTimers({ doNotFake: ['Date', 'nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask'] });
}

/**
 * The real tree killer, whose waits take real time: asked to kill, it puts the real timers back
 * first. `killed` lists the roots it was asked to kill, so a test sees the moment a runner
 * decides to stop its child.
 */
export function killerOnRealTime(inner: ProcessTreeKiller = new PosixProcessTreeKiller()): ProcessTreeKiller & { killed: number[] } {
  const killed: number[] = [];
  return {
    killed,
    killTree(rootPid) {
      killed.push(rootPid);
      jest.useRealTimers();
      return inner.killTree(rootPid);
    },
    signalTree: (rootPid, signal) => inner.signalTree(rootPid, signal),
  };
}

/**
 * Resolves once the event loop has polled its pipes again: what a child wrote before the test
 * saw its next sign of life (a file it wrote after) has then reached the runner.
 */
export function afterTheNextPoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
