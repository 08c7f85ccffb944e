import type { Job, JobClaim } from '../../src/domain/Job.js';
import { finishRun, isDue } from '../../src/domain/jobLifecycle.js';
import { claimBeside, claimsOf, endOwnRun, runKeyOf, runsBeside } from '../../src/domain/jobRunsBeside.js';
import { requestCancel } from '../../src/domain/runs/runStops.js';
import { parseSchedule } from '../../src/domain/Schedule.js';
import { CREATED_AT, anHourlyJob } from '../support/jobs.js';

const at = (minutes: number) => new Date(CREATED_AT.getTime() + minutes * 60_000);
const iso = (minutes: number) => at(minutes).toISOString().replace('.000Z', 'Z');
const claimAt = (minutes: number, by = 'host:1'): JobClaim => ({ by, at: iso(minutes) });
const ok = { status: 'ok' as const };

/** An hourly job with the policy allow, running since minute 60. */
function runningJob(): Job {
  return { ...anHourlyJob('a1'), overlap: 'allow', state: 'running', claim: claimAt(60), next_run_at: at(120).toISOString() };
}

describe('runs of one job side by side (overlap allow)', () => {
  it('only cron expressions and intervals with allow run beside, and only they are due while running', () => {
    const job = runningJob();
    expect(runsBeside(job)).toBe(true);
    expect(isDue(job, at(120))).toBe(true);
    expect(isDue({ ...job, overlap: 'queue' }, at(120))).toBe(false);
    const oneShot = { ...job, schedule: parseSchedule('2026-07-01T09:00:00Z', CREATED_AT, 'UTC') };
    expect(runsBeside(oneShot)).toBe(false);
    expect(isDue(oneShot, at(120))).toBe(false);
  });

  it('a claim beside keeps the run and counts the next slot from the claim', () => {
    const { stored, run } = claimBeside(runningJob(), 'host:2', at(120), 'UTC');
    expect(stored.claim).toEqual(claimAt(60));
    expect(stored.claims_beside).toEqual([claimAt(120, 'host:2')]);
    expect(stored.next_run_at).toBe(iso(180));
    expect(run.claim).toEqual(claimAt(120, 'host:2'));
    expect(runKeyOf(run)).not.toBe(runKeyOf(stored));
  });

  it('the end of a run beside counts it and leaves the job running its own run', () => {
    const { stored, run } = claimBeside(runningJob(), 'host:2', at(120), 'UTC');
    const ended = endOwnRun(stored, run.claim, (job) => finishRun(job, ok, at(120)));
    expect(ended).toMatchObject({ state: 'running', claim: claimAt(60), claims_beside: [], last_status: 'ok', repeat: { completed: 1 } });
    expect(ended.next_run_at).toBe(stored.next_run_at);
  });

  it('the end of the job own run hands the job to the oldest run beside it', () => {
    const { stored } = claimBeside(runningJob(), 'host:2', at(120), 'UTC');
    const ended = endOwnRun(stored, claimAt(60), (job) => finishRun(job, ok, at(60)));
    expect(ended).toMatchObject({ state: 'running', claim: claimAt(120, 'host:2'), claims_beside: [], repeat: { completed: 1 } });
    const last = endOwnRun(ended, claimAt(120, 'host:2'), (job) => finishRun(job, ok, at(120)));
    expect(last).toMatchObject({ state: 'scheduled', claim: null, repeat: { completed: 2 } });
  });

  it('a cancel asks every run of the job', () => {
    const { stored } = claimBeside(runningJob(), 'host:2', at(120), 'UTC');
    const asked = requestCancel(stored, 'alice', at(121));
    expect(claimsOf(asked).map((claim) => claim.cancel?.by)).toEqual(['alice', 'alice']);
  });
});
