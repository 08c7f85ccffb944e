import { AgentRunError, type AgentRunRequest } from '../../src/application/ports/AgentRunner.js';
import { durationSeconds, formatDuration } from '../../src/domain/durations.js';
import { requestCancel } from '../../src/domain/runs/runStops.js';
import { cronHarness } from '../support/cronHarness.js';

const HOUR = 3_600_000;

/** An agent that runs until its run is stopped, then fails as the real runner does when its signal aborts. */
function untilStopped(request: AgentRunRequest): Promise<string> {
  return new Promise((_resolve, reject) => {
    const stop = () => reject(new AgentRunError('aborted', 'the run was stopped'));
    if (request.signal?.aborted) stop();
    else request.signal?.addEventListener('abort', stop, { once: true });
  });
}

/** Lets the promises of a run move on until it waits on the agent (or the timer). */
const settle = async () => {
  for (let i = 0; i < 20; i += 1) await Promise.resolve();
  await new Promise((resolve) => setImmediate(resolve));
};

async function dueJob(h: ReturnType<typeof cronHarness>, extra: { timeout_seconds?: number } = {}) {
  const job = await h.createJob.execute({
    schedule: 'every 1h',
    prompt: 'Check the disks',
    name: 'Disks',
    deliver: 'telegram:42',
    ...extra,
  });
  h.clock.advance(HOUR);
  return job;
}

describe('lengths of time', () => {
  it.each([
    ['90s', 90],
    ['10m', 600],
    ['1h30m', 5400],
    ['2 hours', 7200],
    ['1d', 86_400],
    [' 5 min ', 300],
  ])('reads %s as %i seconds', (text, seconds) => {
    expect(durationSeconds(text)).toBe(seconds);
  });

  it.each([
    ['10', 'no unit'],
    ['', 'empty'],
    ['5x', 'not a unit'],
    ['0s', 'longer than 0'],
    ['1.5h', 'whole numbers'],
    ['-5m', 'whole numbers'],
  ])('refuses %j, saying why (%s)', (text, why) => {
    expect(durationSeconds(text)).toEqual(expect.stringContaining(why));
  });

  it.each([
    [45, '45s'],
    [600, '10m'],
    [5400, '1h30m'],
    [3605, '1h5s'],
    [172_800, '2d'],
  ])('writes %i seconds as %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });
});

describe("a job's time limit", () => {
  it('stops a run that goes on past it, records "timed out after 10m" and sends the failure notice', async () => {
    const h = cronHarness();
    const job = await dueJob(h, { timeout_seconds: 600 });
    h.agent.reply(untilStopped);

    const tick = h.runDueJobs.execute();
    await settle();
    h.timer.advance(599_000);
    await settle();
    expect(h.agent.requests[0]!.signal?.aborted).toBe(false);
    h.timer.advance(1000);
    const [run] = (await tick).ran;

    expect(run!.report.outcome).toEqual({ status: 'error', error: 'timed out after 10m' });
    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'error', last_error: 'timed out after 10m', state: 'scheduled' });
    const [ledgered] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 1 });
    expect(ledgered).toMatchObject({ status: 'error', error: 'timed out after 10m' });
    expect(h.channel.sent.map((sent) => sent.text).join('\n')).toContain('timed out after 10m');
  });

  it('leaves a run that ends in time alone, and its limit no longer waits', async () => {
    const h = cronHarness();
    await dueJob(h, { timeout_seconds: 600 });

    const [run] = (await h.runDueJobs.execute()).ran;

    expect(run!.report.outcome.status).toBe('ok');
    expect(h.timer.pending).toBe(0);
  });

  it('is kept in the record, shown, and taken away with --no-timeout (null)', async () => {
    const h = cronHarness();
    const job = await dueJob(h, { timeout_seconds: 5400 });
    expect(h.repository.get(job.id)!.timeout_seconds).toBe(5400);

    const edited = await h.editJob.execute({ job: job.id, timeout_seconds: null });

    expect(edited.timeout_seconds).toBeNull();
  });
});

describe('cancelling a run', () => {
  it('stops the run under way in this process at once, recorded "cancelled by alice", with no failure notice', async () => {
    const h = cronHarness();
    const job = await dueJob(h);
    h.agent.reply(untilStopped);
    const tick = h.runDueJobs.execute();
    await settle();

    const asked = await h.cancelJobRun.execute({ job: 'disks', by: 'alice' });
    const [run] = (await tick).ran;

    expect(asked.claim?.cancel).toEqual({ by: 'alice', at: expect.any(String) });
    expect(run!.report.outcome).toEqual({ status: 'error', error: 'cancelled by alice' });
    const stored = h.repository.get(job.id)!;
    expect(stored).toMatchObject({ state: 'scheduled', last_status: 'error', last_error: 'cancelled by alice', claim: null });
    expect(h.channel.sent).toEqual([]);
    expect(await h.cancelJobRun.waitForEnd(asked, 0)).toMatchObject({ state: 'scheduled' });
  });

  it("stops a run once another process's request is seen on the store", async () => {
    const h = cronHarness();
    const job = await dueJob(h);
    h.agent.reply(untilStopped);
    const tick = h.runDueJobs.execute();
    await settle();
    // Another process (agent cron cancel, a replica) writes the request; this one only sees the store change.
    await h.repository.updateById(job.id, (running) => ({ job: requestCancel(running, 'bob', h.clock.now()), result: null }));

    h.cancelRequestedRuns.changed();
    h.cancelRequestedRuns.changed();
    await settle();
    h.timer.advance(300);
    await h.cancelRequestedRuns.settled();
    const [run] = (await tick).ran;

    expect(run!.report.outcome).toEqual({ status: 'error', error: 'cancelled by bob' });
    expect(h.log.entries.filter((entry) => entry.message.includes('cancelling the run'))).toHaveLength(1);
  });

  it('looks at nothing while this process runs no job', async () => {
    const h = cronHarness();
    h.cancelRequestedRuns.changed();
    expect(h.timer.pending).toBe(0);
  });

  it('refuses a job with no run under way, in one sentence', async () => {
    const h = cronHarness();
    await dueJob(h);

    await expect(h.cancelJobRun.execute({ job: 'disks', by: 'alice' })).rejects.toThrow(
      "Job 'Disks' is scheduled, with no run under way to cancel.",
    );
  });

  it('reports a run that does not stop in time as still running', async () => {
    const h = cronHarness();
    await dueJob(h);
    // A run in another process that does not look: its claim stays.
    h.agent.reply(() => new Promise<string>(() => undefined));
    void h.runDueJobs.execute();
    await settle();
    const running = h.repository.get((await h.listJobs.execute()).jobs[0]!.id)!;
    const asked = requestCancel(running, 'carol', h.clock.now());

    const waited = h.cancelJobRun.waitForEnd(asked, 1000);
    for (let i = 0; i < 6; i += 1) {
      await settle();
      h.timer.advance(200);
    }

    expect(await waited).toBe('running');
  });
});
