import type { RunningChild } from './childProcesses.js';

/**
 * How long to wait for a child's pipes to close once it has exited. A process it started in
 * the background inherits the pipes and can hold them open for as long as it lives; the
 * child's result must not wait for that.
 */
export const PIPE_CLOSE_GRACE_MS = 2000;

/**
 * Calls `onFinished` once, when `child` has exited and its output pipes have closed, or
 * `graceMs` after it exited if something still holds them (the pipes are then destroyed, and
 * whatever arrived before counts).
 */
export function whenChildFinished(
  child: RunningChild,
  onFinished: (code: number | null, signal: NodeJS.Signals | null) => void,
  graceMs: number = PIPE_CLOSE_GRACE_MS,
): void {
  let graceTimer: NodeJS.Timeout | undefined;
  let called = false;
  const finish = (code: number | null, signal: NodeJS.Signals | null) => {
    if (called) return;
    called = true;
    clearTimeout(graceTimer);
    onFinished(code, signal);
  };
  child.once('exit', (code, signal) => {
    graceTimer = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      finish(code, signal);
    }, graceMs);
  });
  child.once('close', finish);
}
