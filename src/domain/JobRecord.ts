import {
  CATCH_UP_POLICIES,
  compactBudget,
  JOB_STATES,
  type CatchUp,
  type Job,
  type JobBudget,
  type JobClaim,
  type JobOrigin,
  type JobState,
} from './Job.js';
import { readChainFields } from './jobChains.js';
import { isLastStatus } from './RunOutcome.js';
import { OVERLAP_POLICIES, type Overlap } from './jobCatchUp.js';
import { readPendingRetry, readRetryPolicy, type RetryAttempt } from './retries.js';
import { scheduleFromRecord } from './Schedule.js';
import { assertTimeZone } from './zonedTime.js';

/** A stored record that could not be understood; it is kept untouched and reported. */
export interface UnreadableRecord {
  index: number;
  id: string | null;
  reason: string;
}

export type RecordReading = { ok: true; job: Job } | { ok: false; problem: UnreadableRecord };

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const strList = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every((item) => typeof item === 'string') ? [...value] : null;

function origin(value: unknown): JobOrigin | null {
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const platform = str(record.platform);
  const chatId = record.chat_id === undefined || record.chat_id === null ? null : String(record.chat_id);
  if (!platform || chatId === null) return null;
  const thread = record.thread_id === undefined || record.thread_id === null ? null : String(record.thread_id);
  const userId = record.user_id === undefined || record.user_id === null ? null : String(record.user_id);
  return {
    platform,
    chat_id: chatId,
    thread_id: thread,
    ...(userId === null ? {} : { user_id: userId, user_name: str(record.user_name) }),
  };
}

function claim(value: unknown): JobClaim | null {
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const by = str(record.by);
  const at = str(record.at);
  if (!by || !at) return null;
  const cancel = typeof record.cancel === 'object' && record.cancel !== null ? (record.cancel as Record<string, unknown>) : null;
  const cancelBy = str(cancel?.by);
  const cancelAt = str(cancel?.at);
  const retry = readRetryAttempt(record.retry);
  return {
    by,
    at,
    ...(cancelBy && cancelAt ? { cancel: { by: cancelBy, at: cancelAt } } : {}),
    ...(retry ? { retry } : {}),
  };
}

/** The claims of the runs beside a job's run (domain/jobRunsBeside.ts), when it has any. */
function claimsBeside(value: unknown): { claims_beside?: JobClaim[] } {
  if (!Array.isArray(value)) return {};
  const claims = value.map(claim).filter((each): each is JobClaim => each !== null);
  return claims.length > 0 ? { claims_beside: claims } : {};
}

function readRetryAttempt(value: unknown): RetryAttempt | null {
  if (typeof value !== 'object' || value === null) return null;
  const { attempt, retry_of: of } = value as Record<string, unknown>;
  return typeof attempt === 'number' && Number.isSafeInteger(attempt) && attempt >= 2 && typeof of === 'string'
    ? { attempt, retry_of: of }
    : null;
}

/** A record's `budget`, its limits that are positive numbers; null when none. */
function budgetOf(value: unknown): JobBudget | null {
  return typeof value === 'object' && value !== null ? compactBudget(value as JobBudget) : null;
}

const DATE_FIELDS = ['next_run_at', 'last_run_at', 'created_at', 'paused_at'] as const;

/** Why a stored time field cannot be used, or null when it is absent, null or a readable time. */
function dateProblem(field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return null;
  return `its ${field} ${JSON.stringify(value)} is not a date and time`;
}

/**
 * A record's own time zone: null when absent, null or empty (the configured zone, as for records
 * written before jobs had one), else the name; or why it cannot be used, as a phrase about the record.
 */
function recordTimeZone(value: unknown): { zone: string | null } | string {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return { zone: null };
  if (typeof value !== 'string') return `its timezone ${JSON.stringify(value)} is not a time zone name`;
  try {
    return { zone: assertTimeZone(value.trim()) };
  } catch {
    return `its timezone ${JSON.stringify(value)} is not a time zone this system knows`;
  }
}

/**
 * Reads one stored record into a Job, accepting the shapes older versions wrote: a legacy
 * `skill` becomes `skills: [skill]`, missing optional fields take their defaults. Records
 * lacking an id, a prompt, a usable schedule or a known state are reported, not guessed at.
 */
export function readJobRecord(value: unknown, index: number): RecordReading {
  const fail = (reason: string, id: string | null = null): RecordReading => ({
    ok: false,
    problem: { index, id, reason },
  });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('it is not an object');
  const record = value as Record<string, unknown>;
  const id = str(record.id);
  if (!id) return fail('it has no id');
  const prompt = str(record.prompt);
  if (prompt === null) return fail('it has no prompt', id);
  const schedule = scheduleFromRecord(record.schedule);
  if (typeof schedule === 'string') return fail(schedule, id);
  const state = (record.state ?? 'scheduled') as JobState;
  if (!JOB_STATES.includes(state)) return fail(`its state "${String(record.state)}" is unknown`, id);
  const legacySkill = str(record.skill);
  const skills = strList(record.skills) ?? (legacySkill ? [legacySkill] : []);
  const repeat = (typeof record.repeat === 'object' && record.repeat !== null ? record.repeat : {}) as Record<string, unknown>;
  // A time that is not a time would break every command that shows or schedules the job.
  for (const field of DATE_FIELDS) {
    const problem = dateProblem(field, record[field]);
    if (problem) return fail(problem, id);
  }
  const claimProblem =
    typeof record.claim === 'object' && record.claim !== null
      ? dateProblem('claim.at', (record.claim as Record<string, unknown>).at)
      : null;
  if (claimProblem) return fail(claimProblem, id);
  // Every time of the job is read in its zone: one this system does not know would break them all.
  const timezone = recordTimeZone(record.timezone);
  if (typeof timezone === 'string') return fail(timezone, id);
  const lastStatus = isLastStatus(record.last_status) ? record.last_status : null;
  const retryPending = readPendingRetry(record.retry_pending);
  const createdAt = str(record.created_at) ?? new Date(0).toISOString();
  return {
    ok: true,
    job: {
      id,
      name: str(record.name) ?? id,
      prompt,
      schedule,
      timezone: timezone.zone,
      skills,
      deliver: str(record.deliver) ?? 'origin',
      repeat: {
        times: typeof repeat.times === 'number' ? repeat.times : null,
        completed: typeof repeat.completed === 'number' ? repeat.completed : 0,
      },
      state,
      enabled: typeof record.enabled === 'boolean' ? record.enabled : state !== 'paused' && state !== 'completed',
      next_run_at: str(record.next_run_at),
      last_run_at: str(record.last_run_at),
      last_status: lastStatus,
      last_error: str(record.last_error),
      last_delivery_error: str(record.last_delivery_error),
      last_delivery_queued: strList(record.last_delivery_queued),
      created_at: createdAt,
      model: str(record.model),
      provider: str(record.provider),
      script: str(record.script),
      origin: origin(record.origin),
      paused_at: str(record.paused_at),
      // Unknown to records written before it: skip.
      overlap: (OVERLAP_POLICIES as readonly unknown[]).includes(record.overlap) ? (record.overlap as Overlap) : null,
      // Unknown to records written before them: cron.retry, none waiting.
      retry: readRetryPolicy(record.retry),
      ...(retryPending ? { retry_pending: retryPending } : {}),
      // Unknown to records written before it: absent is no reason.
      paused_reason: str(record.paused_reason),
      failure_streak:
        typeof record.failure_streak === 'number' && Number.isSafeInteger(record.failure_streak) && record.failure_streak > 0
          ? record.failure_streak
          : 0,
      // Unknown to records written before them: absent follows cron.catch_up, and runs the agent.
      catch_up: (CATCH_UP_POLICIES as readonly unknown[]).includes(record.catch_up) ? (record.catch_up as CatchUp) : null,
      no_agent: record.no_agent === true,
      // Unknown to records written before them: the preset, the workspace, nothing carried forward.
      toolsets: strList(record.toolsets),
      workdir: str(record.workdir),
      context_from: strList(record.context_from) ?? [],
      continue: record.continue === true,
      claim: claim(record.claim),
      ...claimsBeside(record.claims_beside),
      ...readChainFields(record),
      // Unknown to records written before it: no time limit.
      timeout_seconds:
        typeof record.timeout_seconds === 'number' && Number.isSafeInteger(record.timeout_seconds) && record.timeout_seconds > 0
          ? record.timeout_seconds
          : null,
      // Unknown to records written before it: absent follows agent.budget.
      ...(budgetOf(record.budget) ? { budget: budgetOf(record.budget) } : {}),
    },
  };
}

/** Records read into jobs: the jobs, the records that are not jobs, and what a rewrite keeps of each. */
export interface RecordsReading {
  /** The jobs read, in the order of their records. */
  jobs: Job[];
  unreadable: UnreadableRecord[];
  /** Each readable record as found, by job id: fields this version does not know survive a rewrite. */
  recordsById: Map<string, Record<string, unknown>>;
  /** For each record, in order, the job read from it, or null for one that could not be read. */
  readings: Array<Job | null>;
}

/**
 * Reads stored records into jobs (readJobRecord each), for the job stores: jobs.json's list and
 * the database's rows. `storedIds`, when the store keeps each record under an id of its own (a
 * row's key), is the id an unreadable record is reported by, rather than whatever it names.
 */
export function readJobRecords(records: readonly unknown[], storedIds?: readonly string[]): RecordsReading {
  const reading: RecordsReading = { jobs: [], unreadable: [], recordsById: new Map(), readings: [] };
  records.forEach((value, index) => {
    const read = readJobRecord(value, index);
    if (read.ok) {
      reading.jobs.push(read.job);
      reading.recordsById.set(read.job.id, value as Record<string, unknown>);
      reading.readings.push(read.job);
    } else {
      const storedId = storedIds?.[index];
      reading.unreadable.push(storedId === undefined ? read.problem : { ...read.problem, id: storedId });
      reading.readings.push(null);
    }
  });
  return reading;
}

/**
 * A job as its record is written and shown (`jobs.json`, `--json`): every field of the Job,
 * `origin` and `paused_at` included; `claim` only while a run holds the job.
 */
export function recordOfJob(job: Job): Record<string, unknown> {
  const { claim, ...atRest } = job;
  return claim === null ? atRest : { ...atRest, claim };
}

/** Fields a Job record replaces when written; `skill` is the legacy field it supersedes. */
export const SUPERSEDED_FIELDS: readonly string[] = ['skill'];

/**
 * The stored form of a job: the record it was read from (fields this version does not know
 * survive a rewrite), overwritten by every field the Job has.
 */
export function storedRecordOf(job: Job, previous: Record<string, unknown> | undefined): Record<string, unknown> {
  const record: Record<string, unknown> = { ...previous, ...recordOfJob(job) };
  // Every Job carries `skills`, which supersedes the legacy fields.
  for (const field of SUPERSEDED_FIELDS) delete record[field];
  // A claim a stored record still had is gone once no run holds the job.
  if (job.claim === null) delete record.claim;
  if (!job.claims_beside?.length) delete record.claims_beside;
  // So is a budget the job no longer has, and a retry that no longer waits.
  if (!job.budget) delete record.budget;
  if (!job.retry_pending) delete record.retry_pending;
  if (!job.after?.length) delete record.after;
  return record;
}
