/**
 * What a job does with a slot it was not run at in time: a one-shot found too late is missed, and
 * a recurring job's overdue slot runs once or is skipped, as its catch-up policy says.
 */
import type { CatchUp, Job } from './Job.js';
import { ONE_SHOT_GRACE_MS, isRecurring, nextRunTime, type Schedule } from './Schedule.js';
import { toIsoUtc } from './zonedTime.js';

/**
 * A one-shot found more than the grace late for its own time is not run (docs/cron.md). One
 * resumed after its time has its slot at the resume instant instead (see resumeJob): the user
 * asked for that run, so it is never judged missed and fires at the next tick, however late.
 */
export function isMissedOneShot(job: Job, now: Date, graceMs: number = ONE_SHOT_GRACE_MS): boolean {
  if (job.schedule.kind !== 'once' || job.next_run_at === null) return false;
  const slot = Date.parse(job.next_run_at);
  if (slot > Date.parse(job.schedule.run_at)) return false;
  return now.getTime() - slot > graceMs;
}

/**
 * The least lateness at which a recurring slot counts as overdue, whatever the grace: the period
 * of the slowest ticker (an `agent chat` session looks once a minute), so that a slot its tick
 * came round to in the normal way is never judged overdue.
 */
export const OVERDUE_MIN_LATENESS_MS = 60_000;

/** The catch-up policy a job follows: its own, else the configured one (`cron.catch_up`). */
export function catchUpOf(job: Pick<Job, 'catch_up'>, configured: CatchUp = 'once'): CatchUp {
  return job.catch_up ?? configured;
}

/**
 * Whether the slot of a recurring job was found overdue at `at`: later than the missed-run grace
 * of one-shots (`cron.one_shot_grace_seconds`, isMissedOneShot), and never by less than
 * OVERDUE_MIN_LATENESS_MS. One-shots are never overdue here: they have the missed rule.
 */
export function isOverdueSlot(job: Job, at: Date, graceMs: number = ONE_SHOT_GRACE_MS): boolean {
  if (!isRecurring(job.schedule) || job.next_run_at === null) return false;
  return at.getTime() - Date.parse(job.next_run_at) > Math.max(graceMs, OVERDUE_MIN_LATENESS_MS);
}

/** Whether a due job's slot is skipped rather than run: it is overdue and its policy is `skip`. */
export function skipsOverdueSlot(job: Job, at: Date, configured: CatchUp = 'once', graceMs: number = ONE_SHOT_GRACE_MS): boolean {
  return catchUpOf(job, configured) === 'skip' && isOverdueSlot(job, at, graceMs);
}

/** How many slots of a recurring job fell between `slot` and `now`, `slot` included; counted up to `cap`. */
export function slotsMissed(schedule: Schedule, slot: Date, now: Date, timeZone: string, cap = 1000): number {
  let count = 0;
  for (let at: Date | null = slot; at !== null && at.getTime() <= now.getTime() && count < cap; at = nextRunTime(schedule, at, timeZone))
    count += 1;
  return Math.max(1, count);
}

/**
 * What a slot of a recurring job does when it comes while the job's previous run still runs
 * (`--overlap`, docs/cron.md, Overlap): `skip` records it skipped and waits for the next slot,
 * `queue` runs it once as soon as the run ends, and `allow` runs it beside the run
 * (domain/jobRunsBeside.ts).
 */
export type Overlap = 'skip' | 'queue' | 'allow';
export const OVERLAP_POLICIES: readonly Overlap[] = ['skip', 'queue', 'allow'];

/**
 * The job as a run that started at `startedAt` and ended at `now` leaves it, under its overlap policy: with `skip` (the
 * default), a slot that came while it ran is passed over (the next slot counted from `now`) and
 * returned, for its `skipped` record; with `queue` it stays due, and runs at once (with `allow`
 * it was claimed beside the run when it came, or still waits for a free run slot).
 */
export function settleOverlap(job: Job, startedAt: Date, now: Date, timeZone: string): { job: Job; skipped: Date | null } {
  // A retry waiting, or a run started by a job it runs after (chains), is not a slot of its schedule.
  if (
    !isRecurring(job.schedule) ||
    job.state !== 'scheduled' ||
    job.next_run_at === null ||
    job.retry_pending ||
    job.chained_from?.pending
  ) {
    return { job, skipped: null };
  }
  const slot = new Date(job.next_run_at);
  // A slot already due when the run started was not the run's overlap: it is the catch-up's business.
  if (slot.getTime() > now.getTime() || slot.getTime() <= startedAt.getTime() || (job.overlap ?? 'skip') !== 'skip') {
    return { job, skipped: null };
  }
  return { job: skipOverdueSlot(job, now, timeZone), skipped: slot };
}

/**
 * Skips the overdue slot of a recurring job (catch-up policy `skip`): nothing runs and nothing is
 * counted; the next slot is computed from `now`, as a run's claim would.
 */
export function skipOverdueSlot(job: Job, now: Date, timeZone: string): Job {
  const next = nextRunTime(job.schedule, now, timeZone);
  return { ...job, next_run_at: next ? toIsoUtc(next) : null };
}
