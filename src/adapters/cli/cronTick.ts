/**
 * The tick of the cron commands: `agent cron tick`, the tick every other cron command runs
 * first, and what `--no-tick` still does.
 */
import { writeJson, writeLine, type CliIO } from './CliIO.js';
import { cliFiringPath } from './cliFiring.js';
import { commandInterruption } from './commandInterruption.js';
import type { CronApp } from './cronApp.js';
import { tickLines } from './formatJobs.js';
import { settleAbandoned } from './implicitTick.js';
import { cronRunJson } from './jsonViews.js';

/** `--no-tick`: no due job runs, but the runs whose process is gone are recorded so (settleAbandoned). */
export async function settleAbandonedRuns(cron: CronApp, io: CliIO): Promise<void> {
  const claims = await settleAbandoned(cron.runDueJobs, io, cron.paths.cronDir);
  if (claims)
    for (const line of tickLines({ lockBusy: false, ran: [], missed: [], skipped: [], recovered: claims.recovered }))
      writeLine(io.stderr, line);
}

/**
 * Runs one tick. `explicit` (agent cron tick) reports what ran to stdout, and only with
 * `verbose` that nothing ran: from a crontab, any output is mailed. Otherwise (the tick before
 * another command) the report goes to stderr.
 */
export async function tick(cron: CronApp, io: CliIO, explicit: { verbose: boolean; json: boolean } | null): Promise<void> {
  const onRunStart = (job: { id: string; name: string }) => {
    // A run under way: a stop signal must end what it starts and record it (commandInterruption).
    commandInterruption.arm();
    if (io.interactive) writeLine(io.stderr, `Running due job ${job.id} '${job.name}'…`);
  };
  const signal = commandInterruption.signal;
  if (!explicit) {
    // One look through the built-in ticker; what it did goes to stderr (see cliFiringPath).
    const fire = cliFiringPath(cron.runDueJobs, io, { input: { onRunStart, signal }, storeDir: cron.paths.cronDir });
    await (await cron.startFiring({ kind: 'once' }, fire)).stop();
    return;
  }
  const report = await cron.runDueJobs.execute({ onRunStart, signal });
  if (explicit.json) {
    // The runs are the document; what else the tick found (missed, skipped, recovered) is said on stderr.
    if (report.lockBusy && explicit.verbose) writeLine(io.stderr, 'Another tick is in progress; nothing was run.');
    for (const line of tickLines({ ...report, ran: [] })) writeLine(io.stderr, line);
    writeJson(
      io.stdout,
      report.ran.map((run) => cronRunJson(run.job, run.report)),
    );
    return;
  }
  if (report.lockBusy) {
    if (explicit.verbose) writeLine(io.stdout, 'Another tick is in progress; nothing was run.');
    return;
  }
  const lines = tickLines(report);
  for (const line of lines) writeLine(io.stdout, line);
  if (lines.length === 0 && explicit.verbose) writeLine(io.stdout, 'No jobs were due.');
}
