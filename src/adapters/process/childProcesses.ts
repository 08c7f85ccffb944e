import type * as ChildProcessModule from 'node:child_process';

let loading: Promise<typeof ChildProcessModule> | null = null;

/**
 * node:child_process, loaded on first use. It pulls in net, dgram and the stream machinery,
 * which a command that starts no process (`agent cron list` with nothing due) should not pay
 * for at start-up.
 */
export function childProcesses(): Promise<typeof ChildProcessModule> {
  loading ??= import('node:child_process');
  return loading;
}
