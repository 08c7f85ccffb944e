import type { Overlap } from '../../domain/jobCatchUp.js';
import type { JobRun } from '../../application/cron/jobRuns.js';
import type { ShowJobOutput } from '../../application/cron/ShowJob.js';
import type { CatchUp, Job } from '../../domain/Job.js';
import { describeAfter, describeFollowers } from '../../domain/jobChains.js';
import { catchUpOf } from '../../domain/jobCatchUp.js';
import { isRecurring } from '../../domain/Schedule.js';
import {
  describeCarriedAnswers,
  describeRepeat,
  describeOrigin,
  describeTargets,
  describeToolsets,
  describeWorkdir,
} from '../../domain/jobDetails.js';
import { describeSchedule } from '../../domain/scheduleWords.js';
import { formatWallClock, toIsoUtc, wallClockAt } from '../../domain/zonedTime.js';
import { recordOfJob } from '../../domain/JobRecord.js';
import { textTable } from './textTable.js';
import { formatDuration } from '../../domain/durations.js';
import { budgetInWords, costInWords, tokensInWords, totalsInWords } from '../../domain/runs/runTotals.js';

/** What each overlap policy does, as `cron show` says it. */
const OVERLAP_IN_WORDS: Record<Overlap, string> = {
  skip: 'skip: a slot that comes during a run is skipped',
  queue: 'queue: a slot that comes during a run runs once it ends',
  allow: 'allow: a slot that comes during a run runs beside it',
};

export { costInWords, tokensInWords } from '../../domain/runs/runTotals.js';

const pad = (value: number) => String(value).padStart(2, '0');

/** `YYYY-MM-DD HH:MM:SS` in `timeZone`: runs a few seconds apart stay apart. */
export function wallClockWithSeconds(instant: Date, timeZone: string): string {
  const c = wallClockAt(instant, timeZone);
  return `${c.year}-${pad(c.month)}-${pad(c.day)} ${pad(c.hour)}:${pad(c.minute)}:${pad(c.second)}`;
}

function when(iso: string | null, timeZone: string): string | null {
  return iso === null || Number.isNaN(Date.parse(iso)) ? null : formatWallClock(new Date(iso), timeZone);
}

function weekday(instant: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-US', { weekday: 'short', timeZone }).format(instant);
}

function stateInWords(job: Job, timeZone: string): string {
  const enabled = job.enabled ? 'enabled' : 'disabled';
  if (job.state === 'paused' && job.paused_at) return `paused since ${when(job.paused_at, timeZone) ?? job.paused_at} (${enabled})`;
  if (job.state === 'running' && job.claim)
    return `running since ${when(job.claim.at, timeZone) ?? job.claim.at}, in ${job.claim.by} (${enabled})`;
  return `${job.state} (${enabled})`;
}

function modelInWords(job: Job): string {
  if (job.model === null && job.provider === null) return 'the configured default';
  if (job.provider === null) return `${job.model} (the configured provider)`;
  if (job.model === null) return `the default model of provider ${job.provider}`;
  return `${job.model} (provider ${job.provider})`;
}

/** Whether the agent runs, or only the script (`--no-agent`). */
function agentInWords(job: Job): string {
  return job.no_agent ? "not run: the script's output is delivered as the answer (--no-agent)" : 'runs on every run';
}

/** What an overdue slot of a recurring job does, and whose setting that is. */
function catchUpInWords(job: Job, configured: CatchUp): string {
  const policy = catchUpOf(job, configured);
  const what = policy === 'skip' ? 'skip: an overdue slot is skipped, the job waits for its next one' : 'once: an overdue slot runs once';
  return `${what} (${job.catch_up === null ? 'cron.catch_up' : "the job's own --catch-up"})`;
}

function nextRunInWords(job: Job, timeZone: string): string {
  const next = when(job.next_run_at, timeZone);
  if (job.state === 'completed') return 'none: the job has completed';
  if (job.state === 'paused') return 'none while paused ("agent cron resume" schedules it again)';
  return next ?? 'none';
}

/** Label and value lines; a value of several lines continues under its first line. */
function fieldLines(fields: ReadonlyArray<[string, string]>): string[] {
  const width = Math.max(...fields.map(([label]) => label.length)) + 2;
  return fields.flatMap(([label, value]) => {
    const [first = '', ...rest] = value.split('\n');
    return [`  ${`${label}:`.padEnd(width)}${first}`.trimEnd(), ...rest.map((line) => `  ${' '.repeat(width)}${line}`.trimEnd())];
  });
}

/** The past runs as a table: time, status and the first line of the error or answer. */
export function runTable(runs: readonly JobRun[], timeZone: string): string {
  return textTable(
    [`TIME (${timeZone})`, 'STATUS', 'TOKENS', 'COST', 'ANSWER OR ERROR'],
    runs.map((run) => [
      run.startedAt ? wallClockWithSeconds(run.startedAt, timeZone) : '-',
      run.status ?? '-',
      tokensInWords(run.usage),
      costInWords(run.costUsd),
      truncate(run.headline ?? '-', 100),
    ]),
  );
}

function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** `agent cron show`: every field in words, the coming runs and the last runs. */
/** A job's retries in words: its own policy, else cron.retry's. */
function retriesInWords(job: Job): string {
  const policy = job.retry;
  if (!policy) return 'as cron.retry says (none unless it is set)';
  if (policy.times === 0) return 'none';
  return `up to ${policy.times} after a failure that may pass, the first after ${formatDuration(policy.backoff_seconds)}, each wait doubled, at most ${formatDuration(policy.max_seconds)}`;
}

export function jobDetails({
  job,
  timeZone,
  nextRuns,
  recentRuns,
  catchUp = 'once',
  jobNames = {},
  spent,
  followers = [],
}: ShowJobOutput): string {
  const lines = [
    `Job ${job.id} '${job.name}'`,
    ...fieldLines([
      ['Id', job.id],
      ['Name', job.name],
      ['State', stateInWords(job, timeZone)],
      ...(job.state === 'paused' && job.paused_reason ? ([['Paused because', job.paused_reason]] as Array<[string, string]>) : []),
      // A macro is shown as written (`@daily`), not as the expression it stands for.
      [
        'Schedule',
        `${describeSchedule(job.schedule, timeZone)} (${job.schedule.kind === 'cron' ? job.schedule.display : job.schedule.expr})`,
      ],
      ['Time zone', timeZone],
      ['Prompt', job.prompt === '' ? 'none' : job.prompt],
      ['Skills', job.skills.length > 0 ? job.skills.join(', ') : 'none'],
      ['Script', job.script ?? 'none'],
      ['Agent', agentInWords(job)],
      ['Toolsets', describeToolsets(job)],
      ['Working folder', describeWorkdir(job)],
      ['Context from', describeCarriedAnswers(job, jobNames)],
      ['Runs after', describeAfter(job, jobNames)],
      ['Followed by', describeFollowers(followers)],
      ['Model', modelInWords(job)],
      ['Repeat', describeRepeat(job.repeat)],
      // One-shots have the missed rule instead (cron.one_shot_grace_seconds).
      ...(isRecurring(job.schedule) ? ([['Catch-up', catchUpInWords(job, catchUp)]] as Array<[string, string]>) : []),
      ['Budget', budgetInWords(job.budget)],
      ['Time limit', job.timeout_seconds ? `${formatDuration(job.timeout_seconds)} a run` : 'none'],
      ['Retries', retriesInWords(job)],
      ...(isRecurring(job.schedule) ? ([['Overlap', OVERLAP_IN_WORDS[job.overlap ?? 'skip']]] as Array<[string, string]>) : []),
      ...(job.claims_beside?.length
        ? ([['Runs under way', `${job.claims_beside.length + (job.claim ? 1 : 0)}, side by side`]] as Array<[string, string]>)
        : []),
      ...(job.retry_pending
        ? ([
            ['Retry waiting', `attempt ${job.retry_pending.attempt} at ${when(job.retry_pending.at, timeZone) ?? job.retry_pending.at}`],
          ] as Array<[string, string]>)
        : []),
      ...(spent
        ? ([
            ['Spent, last 24 h', totalsInWords(spent.day)],
            ['Spent, last 30 days', totalsInWords(spent.month)],
          ] as Array<[string, string]>)
        : []),
      ['Delivers to', describeTargets(job)],
      ['Origin', describeOrigin(job.origin)],
      ['Created', when(job.created_at, timeZone) ?? job.created_at],
      ['Last run', when(job.last_run_at, timeZone) ?? 'never'],
      ['Last status', job.last_status ?? '-'],
      ...(job.failure_streak > 0 ? ([['Failed runs in a row', String(job.failure_streak)]] as Array<[string, string]>) : []),
      ['Last error', job.last_error ?? '-'],
      ['Last delivery error', job.last_delivery_error ?? '-'],
      ...(job.last_delivery_queued ? ([['Last delivery queued', job.last_delivery_queued.join(', ')]] as Array<[string, string]>) : []),
      ['Next run', nextRunInWords(job, timeZone)],
    ]),
  ];
  // A one-shot's one time is its "Next run" above.
  if (nextRuns.length > 0 && isRecurring(job.schedule)) {
    lines.push('', `Next ${nextRuns.length} run${nextRuns.length === 1 ? '' : 's'} (${timeZone}):`);
    lines.push(...nextRuns.map((run) => `  ${formatWallClock(run, timeZone)}  ${weekday(run, timeZone)}`));
  }
  lines.push('');
  if (recentRuns.length === 0) lines.push('Recent runs: none yet.');
  else
    lines.push(
      'Recent runs (newest first):',
      ...runTable(recentRuns, timeZone)
        .split('\n')
        .map((line) => `  ${line}`),
    );
  return lines.join('\n');
}

/** A past run as `--json` shows it. */
export function runJson(run: JobRun) {
  return {
    id: run.id,
    run_at: run.startedAt ? toIsoUtc(run.startedAt) : null,
    finished_at: run.finishedAt ? toIsoUtc(run.finishedAt) : null,
    slot: run.slot ? toIsoUtc(run.slot) : null,
    status: run.status,
    model: run.model,
    summary: run.headline,
    error: run.error,
    response: run.response,
    deliveries: run.deliveries,
    file: run.location,
    redelivered_at: run.redeliveredAt ? toIsoUtc(run.redeliveredAt) : null,
    usage: run.usage ?? null,
    cost_usd: run.costUsd ?? null,
    attempt: run.attempt ?? 1,
    retry_of: run.retryOf ?? null,
    trace_id: run.traceId ?? null,
  };
}

/** `agent cron show --json`: the stored record, plus the coming and the last runs. */
export function jobDetailsJson({ job, nextRuns, recentRuns, spent, followers = [] }: ShowJobOutput) {
  return {
    ...recordOfJob(job),
    after: job.after ?? [],
    followed_by: followers.map(({ id, name, on }) => ({ job: id, name, on })),
    next_runs: nextRuns.map(toIsoUtc),
    recent_runs: recentRuns.map(runJson),
    ...(spent ? { spent: { last_24h: spent.day, last_30_days: spent.month } } : {}),
  };
}
