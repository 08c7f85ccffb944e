import type { RunDueJobs, TickInput } from '../../application/cron/RunDueJobs.js';
import type { FiringPath } from '../../application/ports/SchedulerProvider.js';
import { writeLine, type CliIO } from './CliIO.js';
import { tickLines } from './formatJobs.js';
import { implicitTick } from './implicitTick.js';

/** How a command's look for due jobs runs and reports. */
export interface CliLook {
  /** Passed to each tick (e.g. to show a run starting on a terminal). */
  input?: TickInput;
  /** The store's directory, checked for writability before the tick (see implicitTick). */
  storeDir?: string;
}

/**
 * Starts firing due jobs in this command's process through the composition's one firing place,
 * with `fire` as the run path: `once` looks once (a command's implicit tick), `minute` once now
 * and then every minute (an `agent chat` conversation; `onError` hears a minute look that
 * failed). Resolves once the first look, its runs included, is done, and rejects with its error;
 * the result stops the firing.
 */
export type StartCliFiring = (
  cadence: { kind: 'once' } | { kind: 'minute'; onError: (error: unknown) => void },
  fire: FiringPath,
) => Promise<{ stop(): Promise<void> }>;

/**
 * The command line's run path: each look is the implicit tick (RunDueJobs, waiting for the runs),
 * skipped where implicitTick says so, with what it did on stderr so that answers on stdout stay
 * clean. The command line has no fire endpoint, so a slot is never claimed here.
 */
export function cliFiringPath(runDueJobs: RunDueJobs, io: CliIO, look: CliLook): FiringPath {
  const listeners: Array<(jobId: string) => void> = [];
  return {
    due: async () => {
      const report = await implicitTick(runDueJobs, io, look.input, look.storeDir);
      // Skipped (inside a cron run, or in a home this user cannot write), or another tick is under way.
      if (!report || report.lockBusy) return { retrySoon: report?.lockBusy ?? false };
      for (const line of tickLines(report)) writeLine(io.stderr, line);
      for (const run of report.ran) for (const listener of listeners) listener(run.job.id);
      return { retrySoon: false };
    },
    slot: async () => ({ status: 'unavailable', retryAfterSeconds: 60 }),
    onRunFinished: (listener) => void listeners.push(listener),
  };
}
