import { createJob, type Job } from '../../src/domain/Job.js';
import { parseSchedule } from '../../src/domain/Schedule.js';
import type { SchedulerContext, SchedulerProvider } from '../../src/application/ports/SchedulerProvider.js';
import { InMemoryJobRepository } from '../support/fakes/InMemoryJobRepository.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingFiringPath } from '../support/fakes/RecordingFiringPath.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { FakePortal } from '../support/fakePortal.js';
// @ts-expect-error the shipped plugin is plain JavaScript without declarations
import { createSchedulerProvider } from '../../plugins/cron_providers/managed/index.mjs';

const T0 = new Date('2030-01-01T00:00:00Z');

function aJob(id: string, schedule: string, changes: Partial<Job> = {}): Job {
  return { ...createJob({ id, prompt: `job ${id}`, schedule: parseSchedule(schedule, T0, 'UTC') }, T0, 'UTC'), ...changes };
}

describe('the managed provider', () => {
  let portal: FakePortal;
  let jobs: InMemoryJobRepository;
  let fire: RecordingFiringPath;
  let log: RecordingLogger;
  let intervals: Array<{ callback: () => void; ms: number; cleared: boolean }>;
  let provider: SchedulerProvider & { reconcile(): Promise<void> };

  function contextWith(env: Record<string, string | undefined> = { AGENT_CRON_SCHEDULER_TOKEN: portal.token }): SchedulerContext {
    return {
      jobs,
      fire,
      clock: new ManualClock(T0),
      log,
      settings: {
        portal_url: `${portal.url}/`,
        callback_url: 'https://agent.example.com/',
        expected_audience: 'agent-test',
        jwks_url: `${portal.url}/jwks.json`,
      },
      env,
    };
  }

  function makeProvider(context = contextWith()) {
    return createSchedulerProvider(context, {
      setInterval: (callback: () => void, ms: number) => {
        const entry = { callback, ms, cleared: false };
        intervals.push(entry);
        return entry;
      },
      clearInterval: (entry: { cleared: boolean }) => {
        entry.cleared = true;
      },
    }) as SchedulerProvider & { reconcile(): Promise<void> };
  }

  beforeEach(async () => {
    portal = await FakePortal.start();
    jobs = new InMemoryJobRepository([
      aJob('hourly', 'every 1h'),
      aJob('once', '30m'),
      aJob('paused', 'every 1h', { state: 'paused', enabled: false }),
    ]);
    fire = new RecordingFiringPath();
    log = new RecordingLogger();
    intervals = [];
    provider = makeProvider();
  });

  afterEach(async () => {
    await provider.stop();
    await portal.close();
  });

  const armedAt = () => Object.fromEntries([...portal.armed.values()].map((armed) => [armed.job_id, armed.fire_at]));
  const callsOf = (kind: 'provision' | 'cancel' | 'list') => portal.callsOf(kind).filter((call) => call.authorized);
  const messages = (level: string) => log.entries.filter((entry) => entry.level === level).map((entry) => entry.message);

  it('is usable with the four cron.managed keys and the token', () => {
    expect(provider.problem()).toBeNull();
  });

  it('names a missing key', () => {
    const context = contextWith();
    const { jwks_url: _dropped, ...settings } = context.settings;
    expect(makeProvider({ ...context, settings }).problem()).toBe('cron.managed.jwks_url is not set in config.yaml');
  });

  it('names a missing AGENT_CRON_SCHEDULER_TOKEN', () => {
    expect(makeProvider(contextWith({})).problem()).toMatch(/^AGENT_CRON_SCHEDULER_TOKEN is not set/);
  });

  it('arms every schedulable job at start, one fire each, with the callback URL and dedup key', async () => {
    await provider.start(contextWith());
    const hourly = jobs.all().find((job) => job.id === 'hourly')!;
    expect(armedAt()).toEqual({ hourly: hourly.next_run_at, once: jobs.all().find((job) => job.id === 'once')!.next_run_at });
    expect(portal.armed.get('hourly')).toMatchObject({ callback_url: 'https://agent.example.com/api/cron/fire' });
    expect(callsOf('provision').find((call) => call.body?.job_id === 'hourly')?.body).toEqual({
      job_id: 'hourly',
      fire_at: hourly.next_run_at,
      callback_url: 'https://agent.example.com/api/cron/fire',
      dedup_key: `hourly:${hourly.next_run_at}`,
    });
    expect(portal.calls.every((call) => call.authorized)).toBe(true);
  });

  it('reconciles every 10 minutes: arms what moved, cancels what is armed for nothing', async () => {
    await provider.start(contextWith());
    expect(intervals.map((entry) => entry.ms)).toEqual([10 * 60_000]);
    portal.armed.set('ghost', { job_id: 'ghost', fire_at: T0.toISOString(), schedule_id: 'x', callback_url: '', dedup_key: '' });
    await jobs.modify((all) => ({
      jobs: all.map((job) => (job.id === 'hourly' ? { ...job, next_run_at: '2030-01-01T05:00:00.000Z' } : job)),
      result: null,
    }));

    intervals[0]!.callback();
    await provider.reconcile();

    expect(armedAt()).toEqual({ hourly: '2030-01-01T05:00:00.000Z', once: expect.any(String) });
    expect(callsOf('cancel').map((call) => call.body)).toEqual([{ job_id: 'ghost' }]);
  });

  it('jobsChanged arms a new job and cancels a paused or removed one', async () => {
    await jobs.modify((all) => ({ jobs: [...all, aJob('fresh', 'every 2h')], result: null }));
    await provider.jobsChanged(['fresh']);
    expect(Object.keys(armedAt())).toEqual(['fresh']);

    await provider.jobsChanged(['paused', 'removed-long-ago']);
    expect(callsOf('cancel').map((call) => call.body)).toEqual([{ job_id: 'paused' }, { job_id: 'removed-long-ago' }]);
  });

  it('re-arms a recurring job after its run and disarms a one-shot that completed', async () => {
    await provider.start(contextWith());
    await jobs.modify((all) => ({
      jobs: all.map((job) => {
        if (job.id === 'hourly') return { ...job, next_run_at: '2030-01-01T02:00:00.000Z' };
        if (job.id === 'once') return { ...job, state: 'completed' as const, next_run_at: null };
        return job;
      }),
      result: null,
    }));

    fire.finishRun('hourly');
    fire.finishRun('once');
    await portal.until(() => portal.armed.get('hourly')?.fire_at === '2030-01-01T02:00:00.000Z' && !portal.armed.has('once'));
    await provider.stop();
    expect(armedAt()).toEqual({ hourly: '2030-01-01T02:00:00.000Z' });
  });

  it('follows fires with a reconcile: at once after a quiet spell, then one for every fire of the next 10 s', async () => {
    const timeouts: Array<{ callback: () => void; ms: number; cleared: boolean }> = [];
    const context = contextWith();
    const clock = context.clock as ManualClock;
    const timed = createSchedulerProvider(context, {
      setInterval: () => ({}),
      clearInterval: () => undefined,
      setTimeout: (callback: () => void, ms: number) => {
        const entry = { callback, ms, cleared: false };
        timeouts.push(entry);
        return entry;
      },
      clearTimeout: (entry: { cleared: boolean }) => {
        entry.cleared = true;
      },
    }) as SchedulerProvider & { reconcile(): Promise<void> };
    await timed.start(context);
    const lists = () => callsOf('list').length;
    expect(lists()).toBe(1);

    fire.finishRun('hourly');
    await portal.until(() => timeouts.length === 1);
    expect(timeouts[0]!.ms).toBe(0);
    timeouts[0]!.callback();
    await timed.reconcile();
    expect(lists()).toBe(2);

    // Three more fires within the next 10 s share one reconcile, when those 10 s are up.
    clock.advance(4_000);
    const armsBefore = callsOf('provision').length;
    for (const jobId of ['hourly', 'once', 'hourly']) fire.finishRun(jobId);
    await portal.until(() => callsOf('provision').length === armsBefore + 3);
    expect(timeouts.map((entry) => entry.ms)).toEqual([0, 6_000]);
    expect(lists()).toBe(2);
    timeouts[1]!.callback();
    await timed.reconcile();
    expect(lists()).toBe(3);

    fire.finishRun('hourly');
    await portal.until(() => timeouts.length === 3);
    await timed.stop();
    expect(timeouts[2]!.cleared).toBe(true);
  });

  it('leaves a running job armed as it is: its run’s end re-arms it', async () => {
    await provider.start(contextWith());
    await jobs.modify((all) => ({
      jobs: all.map((job) => (job.id === 'hourly' ? { ...job, state: 'running' as const } : job)),
      result: null,
    }));
    const before = portal.calls.length;
    await provider.reconcile();
    await provider.jobsChanged(['hourly']);
    expect(portal.calls.slice(before).filter((call) => call.kind !== 'list')).toEqual([]);
    expect(portal.armed.has('hourly')).toBe(true);
  });

  it('a portal down or answering 5xx while arming: logged, and the next reconcile arms the job', async () => {
    await jobs.modify((all) => ({ jobs: [...all, aJob('fresh', 'every 2h')], result: null }));
    portal.failNext(503);
    await provider.jobsChanged(['fresh']);
    expect(portal.armed.has('fresh')).toBe(false);
    expect(messages('warn')).toEqual([expect.stringMatching(/could not arm job fresh .* answered 503\); the next reconcile tries again/)]);

    portal.failNext('drop');
    await provider.jobsChanged(['fresh']);
    expect(messages('warn')[1]).toMatch(/could not arm job fresh .*unreachable/);

    await provider.reconcile();
    expect(portal.armed.has('fresh')).toBe(true);
  });

  it('a portal that cannot be reached at all: logged, nothing thrown', async () => {
    const url = portal.url;
    await portal.close();
    const context = contextWith();
    const unreachable = makeProvider({ ...context, settings: { ...context.settings, portal_url: url } });
    await expect(unreachable.jobsChanged(['hourly'])).resolves.toBeUndefined();
    expect(messages('warn')).toEqual([expect.stringMatching(/could not arm job hourly .*unreachable/)]);
    portal = await FakePortal.start();
  });

  it('a portal answering 403: logged as a configuration problem and not retried', async () => {
    portal.failNext(403);
    await provider.jobsChanged(['hourly']);
    expect(messages('error')).toEqual([
      expect.stringMatching(/refused to arm job hourly .*403\): a configuration problem — check AGENT_CRON_SCHEDULER_TOKEN/),
    ]);
    const calls = portal.calls.length;
    await provider.jobsChanged(['hourly']);
    await provider.reconcile();
    expect(portal.calls.length).toBe(calls);
  });

  it('sends the bearer token from AGENT_CRON_SCHEDULER_TOKEN (a wrong one is refused)', async () => {
    const wrong = makeProvider(contextWith({ AGENT_CRON_SCHEDULER_TOKEN: 'not-the-token' }));
    await wrong.jobsChanged(['hourly']);
    expect(portal.calls).toEqual([expect.objectContaining({ kind: 'provision', authorized: false })]);
    expect(portal.armed.size).toBe(0);
  });

  it('stops reconciling when stopped', async () => {
    await provider.start(contextWith());
    await provider.stop();
    expect(intervals[0]!.cleared).toBe(true);
  });
});
