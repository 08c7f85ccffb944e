import type { JobRepository } from '../../src/application/ports/JobRepository.js';
import { PostgresJobRepository } from '../../src/adapters/postgres/PostgresJobRepository.js';
import { INSERT_JOB, WAITING_FOR_RUN, dueCondition, jobRowValues } from '../../src/adapters/postgres/jobSql.js';
import { JOB_STATES, type Job } from '../../src/domain/Job.js';
import { dueTime, isDue } from '../../src/domain/jobLifecycle.js';
import { LAST_STATUSES } from '../../src/domain/RunOutcome.js';
import { parseSchedule } from '../../src/domain/Schedule.js';
import { InMemoryJobRepository } from '../support/fakes/InMemoryJobRepository.js';
import { CREATED_AT, anHourlyJob, jobIdFor } from '../support/jobs.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';
import { seededRandom } from '../support/seededRandom.js';

/**
 * "Due" is one rule, `isDue` (src/domain/jobLifecycle.ts), which the PostgreSQL job store spells
 * in SQL (src/adapters/postgres/jobSql.ts) over the columns its writes set. Here the two are held
 * to agree: many generated jobs, every state, enabled or not, next runs before, at and after the
 * moment asked about (to the millisecond, written in other offsets too), none, claims and pauses
 * left over, stored as the store stores them; the SQL's due rows are exactly the jobs `isDue`
 * takes, and the store takes them in the order the whole-list stores do.
 */

const SEED = 0x5eed_d0e;
const JOBS = 2000;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** The moments asked about: whole seconds, odd milliseconds, a DST change, and one before every job. */
const MOMENTS = [
  new Date('2026-03-01T12:00:00.000Z'),
  new Date('2026-03-29T01:00:00.500Z'),
  new Date('2026-11-01T06:30:00.123Z'),
  new Date('1990-01-01T00:00:00.000Z'),
];

type Draw = () => number;
const OVERLAPS = ['skip', 'queue', 'allow'] as const;
const pick = <T>(random: Draw, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** `instant` in the offset `minutes` east of UTC, as a hand-written record may hold it. */
function inOffset(instant: number, minutes: number): string {
  const local = new Date(instant + minutes * MINUTE_MS).toISOString().replace('Z', '');
  const sign = minutes < 0 ? '-' : '+';
  const hours = String(Math.floor(Math.abs(minutes) / 60)).padStart(2, '0');
  return `${local}${sign}${hours}:${String(Math.abs(minutes) % 60).padStart(2, '0')}`;
}

/** A next run near one of the moments (before, at or after it, to the millisecond), far from all, or none. */
function nextRunAt(random: Draw): string | null {
  const around = pick(random, MOMENTS).getTime();
  const offsets =
    random() < 0.5
      ? [-1, 0, 1]
      : [-999, 1000, -MINUTE_MS, MINUTE_MS, -Math.floor(random() * 30 * DAY_MS), Math.floor(random() * 30 * DAY_MS)];
  const choice = random();
  if (choice < 0.12) return null;
  const instant =
    choice < 0.18
      ? Date.parse('1999-12-31T23:59:59Z')
      : choice < 0.24
        ? Date.parse('2099-01-01T00:00:00Z')
        : around + pick(random, offsets);
  const spelling = random();
  if (spelling < 0.5) return new Date(instant).toISOString();
  if (spelling < 0.7) return new Date(instant).toISOString().replace('.000Z', 'Z');
  return inOffset(instant, pick(random, [60, 330, -300, -480, 840]));
}

/** A job of any state and shape a store may hold, drawn from `random`. */
function generatedJob(random: Draw, n: number): Job {
  const base = anHourlyJob(jobIdFor(n));
  const state = pick(random, JOB_STATES);
  const claimed = state === 'running' || random() < 0.1;
  const paused = state === 'paused' || random() < 0.05;
  return {
    ...base,
    schedule: random() < 0.3 ? parseSchedule('2026-04-01T09:00:00Z', CREATED_AT, 'UTC') : base.schedule,
    state,
    enabled: random() < 0.8,
    next_run_at: nextRunAt(random),
    last_run_at: random() < 0.5 ? null : new Date(CREATED_AT.getTime() - Math.floor(random() * DAY_MS)).toISOString(),
    last_status: random() < 0.4 ? null : pick(random, LAST_STATUSES),
    repeat: { times: random() < 0.5 ? null : 3, completed: Math.floor(random() * 4) },
    paused_at: paused ? CREATED_AT.toISOString() : null,
    paused_reason: paused && random() < 0.5 ? 'generated' : null,
    claim: claimed ? { by: 'host:1', at: CREATED_AT.toISOString() } : null,
    // Runs beside a running one (overlap `allow`) make a running job due; the others never do.
    overlap: random() < 0.6 ? null : pick(random, OVERLAPS),
  };
}

function generatedJobs(): Job[] {
  const random = seededRandom(SEED);
  return Array.from({ length: JOBS }, (_, n) => generatedJob(random, n + 1));
}

/** The domain's answer: the jobs due by `now`, the one due first first, ties in store order. */
function dueByDomain(jobs: readonly Job[], now: Date): string[] {
  return jobs
    .filter((job) => isDue(job, now))
    .sort((a, b) => dueTime(a)! - dueTime(b)!)
    .map((job) => job.id);
}

/** The domain's next run after `after`: the earliest due time of a job waiting for a run. */
function nextByDomain(jobs: readonly Job[], after?: Date): number | null {
  const times = jobs.map(dueTime).filter((at): at is number => at !== null && (after === undefined || at > after.getTime()));
  return times.length === 0 ? null : Math.min(...times);
}

/** The ids a store's tick would take as due by `now`, in the order it takes them; it changes nothing. */
async function takenAsDue(repo: JobRepository, now: Date): Promise<string[]> {
  return repo.settleDue(now, JOBS, ({ due }) => ({ changed: [], result: due.map((job) => job.id) }), { running: false });
}

describe('"due" in SQL agrees with isDue', () => {
  const suite = scratchDatabaseForSuite();
  const jobs = generatedJobs();

  beforeAll(async () => {
    await suite.database.transaction(async (tx) => {
      for (const job of jobs) await tx.query(INSERT_JOB, jobRowValues(job, undefined));
    });
  });

  it('draws jobs of every kind the rule tells apart', () => {
    for (const now of MOMENTS.slice(0, 3)) {
      const due = jobs.filter((job) => isDue(job, now));
      expect(due.length).toBeGreaterThan(20);
      expect(due.some((job) => dueTime(job) === now.getTime())).toBe(true);
      expect(jobs.some((job) => dueTime(job) === now.getTime() + 1)).toBe(true);
    }
    for (const state of JOB_STATES) expect(jobs.some((job) => job.state === state && job.enabled && job.next_run_at !== null)).toBe(true);
    expect(jobs.some((job) => job.state === 'scheduled' && !job.enabled && job.next_run_at !== null)).toBe(true);
    expect(jobs.some((job) => job.state === 'scheduled' && job.enabled && job.next_run_at === null)).toBe(true);
    expect(jobs.some((job) => job.state === 'scheduled' && job.claim !== null)).toBe(true);
    expect(jobs.some((job) => job.state === 'running' && isDue(job, MOMENTS[0]!))).toBe(true);
    expect(jobs.some((job) => job.state === 'running' && job.overlap === 'allow' && job.schedule.kind === 'once' && job.enabled)).toBe(
      true,
    );
    expect(jobs.some((job) => job.next_run_at !== null && !job.next_run_at.endsWith('Z'))).toBe(true);
  });

  it.each(MOMENTS.map((now) => [now.toISOString(), now] as const))('selects as due by %s exactly the jobs isDue takes', async (_, now) => {
    const rows = await suite.database.query<{ id: string }>(`SELECT id FROM agent_jobs WHERE ${dueCondition('$1')}`, [now]);
    expect(rows.map((row) => row.id).sort()).toEqual(dueByDomain(jobs, now).sort());
  });

  it.each(MOMENTS.map((now) => [now.toISOString(), now] as const))(
    'takes the jobs due by %s in the order the whole-list stores take them, as they do',
    async (_, now) => {
      const expected = dueByDomain(jobs, now);
      const postgres = new PostgresJobRepository(suite.database);
      const inMemory = new InMemoryJobRepository(jobs);
      expect(await takenAsDue(postgres, now)).toEqual(expected);
      expect(await takenAsDue(inMemory, now)).toEqual(expected);
      expect((await postgres.peek(now)).anyDue).toBe(expected.length > 0);
      expect((await inMemory.peek(now)).anyDue).toBe(expected.length > 0);
    },
  );

  it('finds as the next run the earliest due time of the jobs waiting for a run', async () => {
    const postgres = new PostgresJobRepository(suite.database);
    const inMemory = new InMemoryJobRepository(jobs);
    for (const after of [undefined, ...MOMENTS]) {
      const expected = nextByDomain(jobs, after);
      expect((await postgres.nextRunAt(after))?.getTime() ?? null).toBe(expected);
      expect((await inMemory.nextRunAt(after))?.getTime() ?? null).toBe(expected);
    }
    const waiting = await suite.database.query<{ id: string }>(
      `SELECT id FROM agent_jobs WHERE ${WAITING_FOR_RUN} AND next_run_at IS NOT NULL`,
    );
    expect(waiting.map((row) => row.id).sort()).toEqual(
      jobs
        .filter((job) => dueTime(job) !== null)
        .map((job) => job.id)
        .sort(),
    );
  });
});
