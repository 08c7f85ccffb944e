import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import { claimJob } from '../../src/domain/jobLifecycle.js';
import { planRetry, retryWaitMs, validateRetryPolicy } from '../../src/domain/retries.js';
import { cronHarness } from '../support/cronHarness.js';

const HOUR = 3_600_000;
const overloaded = () => new AgentRunError('failed', 'Every provider failed: local (test): 503 Service Unavailable.', { transient: true });
const refused = () => new AgentRunError('failed', 'The provider local (test) refused the key: 401 Unauthorized.');

async function dueJob(h: ReturnType<typeof cronHarness>, extra: Record<string, unknown> = {}) {
  const job = await h.createJob.execute({ schedule: 'every 1d', prompt: 'Summarise', name: 'Daily', deliver: 'telegram:42', ...extra });
  h.clock.advance(24 * HOUR);
  return job;
}

const secondsUntil = (h: ReturnType<typeof cronHarness>, iso: string | null | undefined) =>
  (Date.parse(iso!) - h.clock.now().getTime()) / 1000;

describe('retries of a failed run', () => {
  it('runs a job whose model answered 503 twice three times: three records linked to the first, one delivery, no failure notice', async () => {
    const h = cronHarness();
    const job = await dueJob(h, { retry: { times: 3, backoff_seconds: 30 } });
    h.agent.reply(overloaded(), overloaded(), 'The summary.');

    await h.runDueJobs.execute();
    const first = h.repository.get(job.id)!;
    expect(first).toMatchObject({ state: 'scheduled', last_status: 'error', failure_streak: 0, repeat: { completed: 0 } });
    expect(first.retry_pending).toMatchObject({ attempt: 2 });
    expect(secondsUntil(h, first.next_run_at)).toBeGreaterThanOrEqual(27);
    expect(secondsUntil(h, first.next_run_at)).toBeLessThanOrEqual(33);

    h.clock.advance(33_000);
    await h.runDueJobs.execute();
    const second = h.repository.get(job.id)!;
    expect(second.retry_pending).toMatchObject({ attempt: 3 });
    expect(secondsUntil(h, second.next_run_at)).toBeGreaterThanOrEqual(54);
    expect(secondsUntil(h, second.next_run_at)).toBeLessThanOrEqual(66);

    h.clock.advance(66_000);
    await h.runDueJobs.execute();

    const last = h.repository.get(job.id)!;
    expect(last).toMatchObject({ last_status: 'ok', failure_streak: 0, repeat: { completed: 1 }, retry_pending: null });
    // The daily slot stays where it was: a day after the first attempt's slot.
    expect(last.next_run_at).toBe(first.retry_pending!.regular_next);
    const runs = (await h.ledger.list({ kind: 'cron', subject: job.id, limit: 10 })).reverse();
    expect(runs.map((run) => [run.status, run.attempt, run.retry_of ?? null])).toEqual([
      ['error', 1, null],
      ['error', 2, runs[0]!.id],
      ['ok', 3, runs[0]!.id],
    ]);
    expect(h.channel.sent.map((sent) => sent.text)).toEqual([expect.stringContaining('The summary.')]);
    expect(h.agent.requests).toHaveLength(3);
  });

  it('sends the failure notice once no attempt is left, and counts the failure then', async () => {
    const h = cronHarness();
    const job = await dueJob(h, { retry: { times: 1, backoff_seconds: 10 } });
    h.agent.reply(overloaded(), overloaded());

    await h.runDueJobs.execute();
    expect(h.channel.sent).toEqual([]);
    h.clock.advance(11_000);
    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({
      last_status: 'error',
      failure_streak: 1,
      repeat: { completed: 1 },
      retry_pending: null,
    });
    expect(h.channel.sent).toHaveLength(1);
    expect(h.channel.sent[0]!.text).toContain('503 Service Unavailable');
  });

  it('never retries a failure that will not pass by itself, nor a blocked run', async () => {
    const h = cronHarness();
    const job = await dueJob(h, { retry: { times: 3 } });
    h.agent.reply(refused());

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'error', failure_streak: 1 });
    expect(h.repository.get(job.id)!.retry_pending ?? null).toBeNull();
    expect(h.channel.sent).toHaveLength(1);

    h.agent.configured = false;
    h.clock.advance(24 * HOUR);
    await h.runDueJobs.execute();
    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'blocked_config' });
    expect(h.repository.get(job.id)!.retry_pending ?? null).toBeNull();
  });

  it('follows cron.retry for a job that sets none, and --no-retry (times 0) turns it off', async () => {
    const h = cronHarness({ settings: { retry: { times: 2, backoff_seconds: 30, max_seconds: 3600 } } });
    const follows = await dueJob(h);
    const opted = await h.createJob.execute({ schedule: 'every 1d', prompt: 'x', name: 'Opted out', retry: { times: 0 } });
    await h.editJob.execute({ job: opted.id, prompt: 'y' });
    h.clock.advance(24 * HOUR);
    h.agent.reply(overloaded(), overloaded());

    await h.runDueJobs.execute();

    expect(h.repository.get(follows.id)!.retry_pending).toMatchObject({ attempt: 2 });
    expect(h.repository.get(opted.id)!.retry_pending ?? null).toBeNull();
  });

  it('drops a retry that would come at or after the next regular slot: that slot runs instead', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({
      schedule: 'every 1h',
      prompt: 'x',
      name: 'Hourly',
      retry: { times: 3, backoff_seconds: 7200, max_seconds: 7200 },
    });
    h.clock.advance(HOUR);
    h.agent.reply(overloaded());

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'error', failure_streak: 1 });
    expect(h.repository.get(job.id)!.retry_pending ?? null).toBeNull();
  });

  it('keeps a one-shot for its retry, and completes it with its last attempt', async () => {
    const h = cronHarness();
    const job = await h.createJob.execute({ schedule: '30m', prompt: 'x', name: 'Once', retry: { times: 2, backoff_seconds: 60 } });
    h.clock.advance(HOUR / 2);
    h.agent.reply(overloaded(), 'Done.');

    await h.runDueJobs.execute();
    expect(h.repository.get(job.id)).toMatchObject({ state: 'scheduled', retry_pending: { attempt: 2, regular_next: null } });
    h.clock.advance(70_000);
    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({ state: 'completed', last_status: 'ok', repeat: { completed: 1 } });
  });
});

describe('the retry plan', () => {
  const policy = validateRetryPolicy({ times: 5, backoff_seconds: 30, max_seconds: 100 })!;

  it('doubles the wait from the back-off up to the longest, each ±10 %', () => {
    expect([1, 2, 3, 4].map((attempt) => retryWaitMs(policy, attempt, 0.5))).toEqual([30_000, 60_000, 100_000, 100_000]);
    expect(retryWaitMs(policy, 1, 0)).toBe(27_000);
    expect(retryWaitMs(policy, 1, 0.999_999)).toBe(33_000);
  });

  it('has no retry left after the last attempt', () => {
    const now = new Date('2026-06-01T08:00:00Z');
    expect(planRetry(policy, { attempt: 6, retry_of: 'r1' }, 'r6', now, null, 0.5)).toBeNull();
    expect(planRetry(policy, { attempt: 5, retry_of: 'r1' }, 'r5', now, null, 0.5)).toMatchObject({ attempt: 6, retry_of: 'r1' });
  });

  it('refuses a count beyond 20 or a wait of nothing, in one sentence', () => {
    expect(() => validateRetryPolicy({ times: 21 })).toThrow('The retry count 21 is not valid; give a whole number from 0 to 20.');
    expect(() => validateRetryPolicy({ times: 2, backoff_seconds: 0 })).toThrow('The retry back-off 0 is not valid');
  });

  it('runs the regular slot instead of a retry whose slot has come meanwhile (the gateway was down)', async () => {
    const h = cronHarness();
    const job = await dueJob(h, { retry: { times: 3, backoff_seconds: 30 } });
    h.agent.reply(overloaded());
    await h.runDueJobs.execute();
    const waiting = h.repository.get(job.id)!;

    const later = new Date(Date.parse(waiting.retry_pending!.regular_next!) + 1000);
    const claimed = claimJob(waiting, 'host:1', later, 'UTC');

    expect(claimed.claim?.retry).toBeUndefined();
    expect(claimed.retry_pending).toBeNull();
    expect(Date.parse(claimed.next_run_at!)).toBeGreaterThan(later.getTime());
  });
});
