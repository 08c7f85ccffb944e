import { ShowStatus } from '../../src/application/status/ShowStatus.js';
import type { GatewayRegistration } from '../../src/application/ports/GatewayRegistry.js';
import type { Job } from '../../src/domain/Job.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { FixedWebhookBacklog } from '../support/fakes/FixedWebhookBacklog.js';
import { InMemoryGatewayRegistry } from '../support/fakes/InMemoryGatewayRegistry.js';
import { InMemoryJobRepository } from '../support/fakes/InMemoryJobRepository.js';
import { anHourlyJob, jobIdFor } from '../support/jobs.js';

const GATEWAY: GatewayRegistration = {
  pid: 4242,
  host: 'test-host',
  startedAt: '2026-03-01T12:00:00.000Z',
  listener: '127.0.0.1:8644',
  provider: 'built-in ticker',
};

function job(n: number, change: Partial<Job> = {}): Job {
  return { ...anHourlyJob(jobIdFor(n)), ...change };
}

function statusOf(options: { jobs?: Job[]; registration?: GatewayRegistration | null; dead?: string[]; waiting?: number } = {}) {
  const identity = new FakeProcessIdentity();
  for (const claimant of options.dead ?? []) identity.dead.add(claimant);
  const registry = new InMemoryGatewayRegistry(options.registration ?? null);
  return new ShowStatus(
    new InMemoryJobRepository(options.jobs ?? []),
    registry,
    identity,
    new FixedWebhookBacklog(options.waiting ?? 0),
  ).execute();
}

describe('ShowStatus', () => {
  it('says no gateway runs when none registered', async () => {
    expect((await statusOf()).gateway).toEqual({ state: 'stopped' });
  });

  it('reports the registered gateway while its process lives', async () => {
    expect((await statusOf({ registration: GATEWAY })).gateway).toEqual({ state: 'running', gateway: GATEWAY });
  });

  it('treats a registration whose process is dead as no gateway', async () => {
    expect((await statusOf({ registration: GATEWAY, dead: ['test-host:4242'] })).gateway).toEqual({ state: 'stopped' });
  });

  it('cannot tell about a gateway registered from another host', async () => {
    const elsewhere = { ...GATEWAY, host: 'other-host' };
    expect((await statusOf({ registration: elsewhere })).gateway).toEqual({ state: 'unknown', gateway: elsewhere });
  });

  it('lists the next five scheduled jobs, earliest first, leaving out paused and running ones', async () => {
    const at = (minutes: number) => new Date(Date.parse('2026-03-02T00:00:00Z') + minutes * 60_000).toISOString();
    const jobs = [
      job(1, { next_run_at: at(30) }),
      job(2, { next_run_at: at(10) }),
      job(3, { next_run_at: at(1), state: 'paused', enabled: false }),
      job(4, { next_run_at: at(2), state: 'running' }),
      job(5, { next_run_at: at(50) }),
      job(6, { next_run_at: at(20) }),
      job(7, { next_run_at: at(40) }),
      job(8, { next_run_at: at(60) }),
      job(9, { next_run_at: null, state: 'completed' }),
    ];
    const { nextJobs } = await statusOf({ jobs });
    expect(nextJobs.map((each) => each.id)).toEqual([2, 6, 1, 7, 5].map(jobIdFor));
    expect(nextJobs[0]).toEqual({ id: jobIdFor(2), name: `job ${jobIdFor(2)}`, nextRunAt: at(10) });
  });

  it('lists jobs whose last run failed with their error, most recent first, and not those that succeeded', async () => {
    const jobs = [
      job(1, { last_status: 'error', last_error: 'agent exited 1', last_run_at: '2026-03-01T10:00:00Z' }),
      job(2, { last_status: 'delivery_failed', last_delivery_error: 'telegram refused', last_run_at: '2026-03-01T11:00:00Z' }),
      job(3, { last_status: 'blocked_config', last_error: 'No model is configured', last_run_at: '2026-03-01T09:00:00Z' }),
      job(4, { last_status: 'ok', last_run_at: '2026-03-01T12:00:00Z' }),
      job(5, { last_status: 'delivery_queued', last_run_at: '2026-03-01T12:00:00Z' }),
    ];
    const { failedJobs } = await statusOf({ jobs });
    expect(failedJobs).toEqual([
      {
        id: jobIdFor(2),
        name: `job ${jobIdFor(2)}`,
        lastStatus: 'delivery_failed',
        lastRunAt: '2026-03-01T11:00:00Z',
        error: 'telegram refused',
      },
      { id: jobIdFor(1), name: `job ${jobIdFor(1)}`, lastStatus: 'error', lastRunAt: '2026-03-01T10:00:00Z', error: 'agent exited 1' },
      {
        id: jobIdFor(3),
        name: `job ${jobIdFor(3)}`,
        lastStatus: 'blocked_config',
        lastRunAt: '2026-03-01T09:00:00Z',
        error: 'No model is configured',
      },
    ]);
  });

  it('counts the webhook events waiting', async () => {
    expect((await statusOf({ waiting: 3 })).webhookEventsWaiting).toBe(3);
  });
});
