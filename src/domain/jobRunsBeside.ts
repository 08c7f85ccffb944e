/**
 * Runs of one job side by side (overlap policy `allow`, docs/cron.md, Overlap): a slot of a
 * recurring job that comes while its run before still runs is claimed beside it. The job's
 * `claim` is its oldest run under way; each run started beside it has a claim of its own in
 * `claims_beside`, so every run is recovered, cancelled and marked on its own, whichever process
 * runs it. The job stays `running` while any of them runs.
 */
import { jobTimeZone, type Job, type JobClaim } from './Job.js';
import { chainClaimed } from './jobChains.js';
import { nextRunTime } from './Schedule.js';
import { toIsoUtc } from './zonedTime.js';

/**
 * Whether a slot of `job` that comes while it runs is claimed beside that run: a job on a cron
 * expression or an interval with the policy `allow`. The PostgreSQL job store spells the same
 * rule in SQL (adapters/postgres/jobSql.ts).
 */
export function runsBeside(job: Pick<Job, 'overlap' | 'schedule'>): boolean {
  return job.overlap === 'allow' && (job.schedule.kind === 'cron' || job.schedule.kind === 'interval');
}

/** Every run of `job` under way, each by its claim: the job's own first, then those beside it. */
export function claimsOf(job: Pick<Job, 'claim' | 'claims_beside'>): JobClaim[] {
  return [...(job.claim ? [job.claim] : []), ...(job.claims_beside ?? [])];
}

/**
 * The key a process knows one run of `job` by: its id and its claim's instant, so that two runs
 * of one job side by side are told apart.
 */
export function runKeyOf(job: Pick<Job, 'id' | 'claim'>): string {
  return job.claim ? `${job.id}@${job.claim.at}` : job.id;
}

/** Whether two claims are the same run's: taken by one process at one instant. */
export function sameClaim(a: JobClaim | null | undefined, b: JobClaim | null | undefined): boolean {
  return !!a && !!b && a.by === b.by && a.at === b.at;
}

/**
 * Claims the due slot of a `running` job that runs beside (runsBeside): the job as stored, with
 * the new claim beside its run and its next slot counted from `countFrom` (by default `now`; a
 * fired slot ahead of our clock counts from itself), and the job as the new run sees it, holding
 * its own claim.
 */
export function claimBeside(
  job: Job,
  claimant: string,
  now: Date,
  configuredZone: string,
  countFrom: Date = now,
): { stored: Job; run: Job } {
  const claim: JobClaim = { by: claimant, at: toIsoUtc(now) };
  const next = nextRunTime(job.schedule, countFrom, jobTimeZone(job, configuredZone));
  const stored: Job = {
    ...job,
    ...chainClaimed(job, now),
    claims_beside: [...(job.claims_beside ?? []), claim],
    next_run_at: next ? toIsoUtc(next) : null,
  };
  return { stored, run: { ...stored, claim } };
}

/**
 * The end of the run that held `mine`, marked by `finish` on the job as stored now (`current`):
 * - a job with no run beside its own: `finish` marks it, as it always did;
 * - the job's own run: `finish` marks it, and the oldest run beside it becomes the job's run
 *   (the job stays `running`, or paused or completed as `finish` left it);
 * - a run beside it, or one whose claim was recovered meanwhile: `finish` counts it and writes
 *   its outcome, but the job's run, state, other claims and next slot stay as they are.
 */
export function endOwnRun(current: Job, mine: JobClaim | null, finish: (job: Job) => Job): Job {
  const beside = current.claims_beside ?? [];
  if (beside.length === 0) return finish(current);
  if (sameClaim(current.claim, mine)) return promoteBeside(finish(current));
  const others = beside.filter((claim) => !sameClaim(claim, mine));
  const finished = finish({ ...current, claim: mine, claims_beside: others });
  const completed = finished.state === 'completed';
  return {
    ...finished,
    claim: current.claim,
    claims_beside: others,
    state: completed ? finished.state : current.state,
    next_run_at: completed ? null : current.next_run_at,
    retry_pending: current.retry_pending ?? null,
  };
}

/** A job whose own run ended while others ran beside it: the oldest of those becomes its run. */
export function promoteBeside(job: Job): Job {
  const [first, ...rest] = job.claims_beside ?? [];
  if (job.claim !== null || first === undefined) return job;
  return { ...job, claim: first, claims_beside: rest, state: job.state === 'scheduled' ? 'running' : job.state };
}
