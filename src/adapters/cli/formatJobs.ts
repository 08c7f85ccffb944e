import type { TickReport } from '../../application/cron/RunDueJobs.js';
import type { JobRunReport } from '../../application/cron/JobRunReports.js';
import { jobTimeZone, type Job } from '../../domain/Job.js';
import type { UnreadableRecord } from '../../domain/JobRecord.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import { compactTargets } from '../../domain/jobDetails.js';
import { formatWallClock } from '../../domain/zonedTime.js';

const COLORS = { red: 31, green: 32, yellow: 33, dim: 2 } as const;
type Color = keyof typeof COLORS;

export function paint(text: string, color: Color, enabled: boolean): string {
  return enabled ? `\u001b[${COLORS[color]}m${text}\u001b[0m` : text;
}

function statusColor(status: string): Color | null {
  switch (status) {
    case 'ok':
      return 'green';
    case 'delivery_queued':
      return 'dim';
    case 'error':
    case 'delivery_failed':
    case 'blocked_config':
      return 'red';
    case 'paused':
      return 'yellow';
    default:
      return null;
  }
}

function when(iso: string | null, timeZone: string): string {
  return iso ? formatWallClock(new Date(iso), timeZone) : '-';
}

/** A job's next run in its zone, which is named when it is not the configured one (the column's). */
function nextRunCell(job: Job, configuredZone: string): string {
  const zone = jobTimeZone(job, configuredZone);
  const at = when(job.next_run_at, zone);
  return zone === configuredZone || job.next_run_at === null ? at : `${at} (${zone})`;
}

/**
 * The `agent cron list` table: id, name, schedule, state, next run, last status, and where the
 * answers go (last, so that scripts reading the first six columns keep working). A job with its
 * own time zone has its next run shown in that zone, named after the time.
 */
export function jobTable(jobs: readonly Job[], timeZone: string, color: boolean): string {
  const header = ['ID', 'NAME', 'SCHEDULE', 'STATE', `NEXT RUN (${timeZone})`, 'LAST STATUS', 'DELIVER'];
  const rows = jobs.map((job) => [
    job.id,
    truncate(job.name, 32),
    truncate(job.schedule.display, 28),
    job.state,
    nextRunCell(job, timeZone),
    job.last_status ?? '-',
    truncate(compactTargets(job.deliver), 32),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[], colorize: boolean) =>
    cells
      .map((cell, column) => {
        const padded = column === cells.length - 1 ? cell : cell.padEnd(widths[column]!);
        const tint = colorize && (column === 3 || column === 5) ? statusColor(cell) : null;
        return tint ? paint(padded, tint, color) : padded;
      })
      .join('  ')
      .trimEnd();
  const reasons = jobs
    .filter((job) => job.state === 'paused' && job.paused_reason)
    .map((job) => `  ${job.id} '${truncate(job.name, 32)}': ${job.paused_reason}`);
  const scriptOnly = jobs.filter((job) => job.no_agent).map((job) => `  ${job.id} '${truncate(job.name, 32)}'`);
  // Below the table, so that scripts reading its columns keep working.
  const footnote = reasons.length > 0 ? ['', 'Paused because:', ...reasons] : [];
  if (scriptOnly.length > 0) footnote.push('', "Without the agent (the script's output is delivered):", ...scriptOnly);
  return [line(header, false), ...rows.map((row) => line(row, true)), ...footnote].join('\n');
}

function truncate(text: string, width: number): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length <= width ? oneLine : `${oneLine.slice(0, width - 1)}…`;
}

export function unreadableWarning(problem: UnreadableRecord, file: string): string {
  const which = problem.id ? `record ${problem.index + 1} (id ${problem.id})` : `record ${problem.index + 1}`;
  return `warning: ${file}: ${which} could not be read because ${problem.reason}; it was kept as it is and does not run.`;
}

export function describeOutcome(outcome: RunOutcome): string {
  switch (outcome.status) {
    case 'ok':
      return 'ok';
    case 'error':
    case 'blocked_config':
      return `${outcome.status}: ${outcome.error}`;
    case 'delivery_failed':
      return `delivery_failed: ${outcome.deliveryError}`;
    case 'delivery_queued':
      return `delivery_queued: ${outcome.receipts.join(', ')}`;
  }
}

export function runLine(job: Pick<Job, 'id' | 'name'>, report: JobRunReport): string {
  const output = report.outputPath ? ` (output: ${report.outputPath})` : '';
  return `Ran job ${job.id} '${job.name}': ${describeOutcome(report.outcome)}${output}`;
}

/** What a tick did, one line per fact; empty when nothing happened. */
export function tickLines(report: TickReport): string[] {
  const lines = report.recovered.map(
    (job) => `Job ${job.id} '${job.name}' was interrupted earlier and is back in service (${job.last_error}).`,
  );
  lines.push(...report.missed.map((job) => `Job ${job.id} '${job.name}' was not run: ${job.last_error}.`));
  lines.push(...report.skipped.map((skip) => `Job ${skip.job.id} '${skip.job.name}' was not run: ${skip.reason}.`));
  lines.push(...report.ran.map((run) => runLine(run.job, run.report)));
  return lines;
}

/** `Created job …`, the next run in the job's zone (its own, else `configuredZone`). */
export function createdLine(job: Job, configuredZone: string): string {
  const timeZone = jobTimeZone(job, configuredZone);
  // A job that runs only after other jobs has no next run of its own to name.
  const next = job.schedule.kind === 'after' ? '' : `, next run ${when(job.next_run_at, timeZone)} (${timeZone})`;
  return `Created job ${job.id} '${job.name}': ${job.schedule.display}${next}, delivers to ${job.deliver}.`;
}

/** One job in a line, the next run in the job's zone (its own, else `configuredZone`). */
export function jobSummary(job: Job, configuredZone: string): string {
  const timeZone = jobTimeZone(job, configuredZone);
  return `${job.id} '${job.name}': ${job.schedule.display}, ${job.state}, next run ${when(job.next_run_at, timeZone)} (${timeZone})`;
}
