import { AgentRunError, type AgentRunRequest } from '../../src/application/ports/AgentRunner.js';
import { STARTS_PER_TURN } from '../../src/domain/PermitPool.js';
import { cronHarness } from '../support/cronHarness.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** An agent whose runs last until the test ends them, or until their run is cancelled. */
function heldAgent(h: ReturnType<typeof cronHarness>) {
  const held = new Map<string, { answer: (text: string) => void; request: AgentRunRequest }>();
  h.agent.defaultReply = (request) =>
    new Promise<string>((resolve, reject) => {
      const prompt = request.context.task;
      const name = /job (\w+)/.exec(prompt)?.[1] ?? prompt;
      held.set(name, { answer: resolve, request });
      request.signal?.addEventListener('abort', () => reject(new AgentRunError('aborted', 'The run was cancelled.')));
    });
  return held;
}

const settle = async () => {
  for (let i = 0; i < 10; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('the gateway dispatching due jobs', () => {
  it('starts a burst of due jobs a few at a time, letting the event loop turn between them', async () => {
    const h = cronHarness({ settings: { maxParallelJobs: 40 } });
    const held = heldAgent(h);
    for (let i = 0; i < 40; i += 1) await h.createJob.execute({ schedule: '1m', prompt: `job j${i}`, name: `j${i}` });
    h.clock.advance(MINUTE);
    const startedAtTurns: number[] = [];
    (h.timer as { yieldTurn?: () => Promise<void> }).yieldTurn = async () => {
      startedAtTurns.push(h.dispatchDueJobs.inProgress);
      await new Promise((resolve) => setImmediate(resolve));
    };

    await h.dispatchDueJobs.dispatch();
    await settle();

    expect(startedAtTurns).toEqual([STARTS_PER_TURN, 2 * STARTS_PER_TURN]);
    expect(held.size).toBe(40);
    for (const run of held.values()) run.answer('done');
    await settle();
  });

  it('claims jobs due within the lead ahead of their slot and starts each at its slot, dated then', async () => {
    const h = cronHarness({ settings: { claimAheadMs: SECOND } });
    const held = heldAgent(h);
    const jobs = [];
    for (const name of ['a', 'b']) jobs.push(await h.createJob.execute({ schedule: '1m', prompt: `job ${name}`, name }));
    const slot = new Date(jobs[0]!.next_run_at!);
    h.clock.set(new Date(slot.getTime() - 600));

    await h.dispatchDueJobs.dispatch();
    await settle();
    const claimedAhead = jobs.map((job) => h.repository.get(job.id)?.state);
    const askedAhead = held.size;
    h.clock.set(slot);
    h.timer.advance(600);
    await settle();

    expect(claimedAhead).toEqual(['running', 'running']);
    expect(askedAhead).toBe(0);
    expect([...held.keys()].sort()).toEqual(['a', 'b']);
    for (const run of held.values()) run.answer('done');
    await settle();
    for (const job of jobs) {
      const [run] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 1 });
      expect(run).toMatchObject({ status: 'ok', started_at: slot.toISOString() });
    }
    expect(h.repository.get(jobs[0]!.id)).toMatchObject({ state: 'completed', last_status: 'ok' });
    expect(h.log.entries.filter((entry) => entry.message.includes('late'))).toEqual([]);
  });

  it('starts a job that becomes due while another runs, without waiting for that run', async () => {
    const h = cronHarness();
    const held = heldAgent(h);
    const long = await h.createJob.execute({ schedule: 'every 1m', prompt: 'job long', name: 'long' });
    const soon = await h.createJob.execute({ schedule: '2m', prompt: 'job soon', name: 'soon' });
    h.clock.advance(MINUTE);

    await h.dispatchDueJobs.dispatch();
    await settle();
    expect([...held.keys()]).toEqual(['long']);

    h.clock.advance(MINUTE);
    await h.dispatchDueJobs.dispatch();
    await settle();

    expect([...held.keys()]).toEqual(['long', 'soon']);
    expect(h.repository.get(long.id)!.state).toBe('running');
    held.get('soon')!.answer('done');
    await settle();
    expect(h.repository.get(soon.id)).toMatchObject({ state: 'completed', last_status: 'ok' });
    held.get('long')!.answer('done');
  });

  it('claims again at the next dispatch after one failed (the store was away), and every claim after it', async () => {
    const h = cronHarness();
    const held = heldAgent(h);
    await h.createJob.execute({ schedule: '1m', prompt: 'job first', name: 'first' });
    h.clock.advance(MINUTE);
    const settleDue = h.repository.settleDue.bind(h.repository);
    h.repository.settleDue = async () => {
      throw new Error('the database is away');
    };

    await expect(h.dispatchDueJobs.dispatch()).rejects.toThrow('the database is away');
    h.repository.settleDue = settleDue;
    await h.dispatchDueJobs.dispatch();
    await settle();

    expect([...held.keys()]).toEqual(['first']);
    await h.createJob.execute({ schedule: '1m', prompt: 'job second', name: 'second' });
    h.clock.advance(MINUTE);
    await h.dispatchDueJobs.dispatch();
    await settle();
    expect([...held.keys()]).toEqual(['first', 'second']);
    for (const run of held.values()) run.answer('done');
    await settle();
  });

  it('looks no further than the free slots when a run ends, and at every waiting job once a second, reporting each once', async () => {
    const h = cronHarness({ settings: { maxParallelJobs: 2 } });
    const held = heldAgent(h);
    for (const name of ['a', 'b', 'c', 'd', 'e']) await h.createJob.execute({ schedule: '1m', prompt: `job ${name}`, name });
    h.clock.advance(MINUTE);
    const looks: Array<{ limit: number; running: boolean | undefined }> = [];
    const settleDue = h.repository.settleDue.bind(h.repository);
    h.repository.settleDue = (dueBy, limit, decide, options) => {
      looks.push({ limit, running: options?.running });
      return settleDue(dueBy, limit, decide, options);
    };

    await h.dispatchDueJobs.dispatch();
    await settle();
    held.get('a')!.answer('done');
    await settle();
    await h.dispatchDueJobs.dispatch();
    await settle();
    h.clock.advance(SECOND);
    held.get('b')!.answer('done');
    await settle();
    await h.dispatchDueJobs.dispatch();
    await settle();

    // The first look sees every waiting job; the next, in the same second, only the freed slot.
    // No running job looked abandoned, so none was held.
    expect(looks).toEqual([
      { limit: 2 + 1000, running: false },
      { limit: 1, running: false },
      { limit: 1 + 1000, running: false },
    ]);
    expect([...held.keys()].sort()).toEqual(['a', 'b', 'c', 'd']);
    const reports = h.log.entries
      .filter((entry) => /is due and waits for a free run slot/.test(entry.message))
      .map((entry) => entry.message);
    expect(reports).toHaveLength(3);
    for (const run of held.values()) run.answer('done');
    await settle();
  });

  it('runs no more than cron.max_parallel_jobs at once; the rest wait, unclaimed, and start late with a warning', async () => {
    const h = cronHarness({ settings: { maxParallelJobs: 2 } });
    const held = heldAgent(h);
    for (const name of ['a', 'b', 'c']) await h.createJob.execute({ schedule: '1m', prompt: `job ${name}`, name });
    h.clock.advance(MINUTE);

    const first = await h.dispatchDueJobs.dispatch();
    await settle();

    expect(first.waiting).toBe(1);
    expect([...held.keys()].sort()).toEqual(['a', 'b']);
    const waiting = h.repository.all().find((job) => job.name === 'c')!;
    // Never claimed: a crash now cannot use up its slot.
    expect(waiting).toMatchObject({ state: 'scheduled', claim: null });
    expect(h.log.entries.some((entry) => /job 'c' is due and waits for a free run slot/.test(entry.message))).toBe(true);

    // Five minutes later a slot frees: a one-shot that waited for it is late, not missed.
    h.clock.advance(5 * MINUTE);
    held.get('a')!.answer('done');
    await settle();
    await h.dispatchDueJobs.dispatch();
    await settle();

    expect(held.has('c')).toBe(true);
    const late = h.log.entries.find((entry) => entry.level === 'warn' && /job 'c' started 300\.0 s late/.test(entry.message));
    expect(late?.message).toContain('every run slot was busy');
    held.get('b')!.answer('done');
    held.get('c')!.answer('done');
    await settle();
    expect(h.repository.get(waiting.id)).toMatchObject({ state: 'completed', last_status: 'ok' });
  });

  it('gives every process a run starts the job id in AGENT_CRON_RUN', async () => {
    const h = cronHarness();
    h.scripts.scripts['collect.sh'] = { stdout: 'data' };
    const job = await h.createJob.execute({ schedule: '1m', prompt: 'job x', script: 'collect.sh' });
    h.clock.advance(MINUTE);

    await h.runDueJobs.execute();

    expect(h.agent.requests[0]!.environment).toEqual({ AGENT_CRON_RUN: job.id });
    expect(h.scripts.options[0]!.environment).toEqual({ AGENT_CRON_RUN: job.id });
  });

  describe('stopping', () => {
    it('lets runs that end within the grace period finish as usual', async () => {
      const h = cronHarness();
      const held = heldAgent(h);
      const job = await h.createJob.execute({ schedule: 'every 1m', prompt: 'job a', name: 'a' });
      h.clock.advance(MINUTE);
      await h.dispatchDueJobs.dispatch();
      await settle();

      const stopping = h.dispatchDueJobs.stop(30 * SECOND);
      await settle();
      held.get('a')!.answer('done');

      await expect(stopping).resolves.toBe(true);
      expect(h.repository.get(job.id)).toMatchObject({ state: 'scheduled', last_status: 'ok' });
      expect(h.timer.pending).toBe(0);
    });

    it('cancels runs still going after the grace period and records their jobs as interrupted', async () => {
      const h = cronHarness();
      const held = heldAgent(h);
      const recurring = await h.createJob.execute({ schedule: 'every 1m', prompt: 'job every', name: 'every' });
      const oneShot = await h.createJob.execute({ schedule: '1m', prompt: 'job once', name: 'once' });
      h.clock.advance(MINUTE);
      await h.dispatchDueJobs.dispatch();
      await settle();

      const stopping = h.dispatchDueJobs.stop(30 * SECOND);
      await settle();
      h.timer.advance(30 * SECOND);

      await expect(stopping).resolves.toBe(false);
      expect(held.get('every')!.request.signal!.aborted).toBe(true);
      expect(h.repository.get(recurring.id)).toMatchObject({ state: 'scheduled', last_status: 'error', repeat: { completed: 1 } });
      expect(h.repository.get(recurring.id)!.last_error).toMatch(/^interrupted: /);
      // A one-shot's only slot was used by its claim: it is never run a second time.
      expect(h.repository.get(oneShot.id)).toMatchObject({ state: 'completed', enabled: false, last_status: 'error' });
      expect(h.repository.get(oneShot.id)!.last_error).toMatch(/^interrupted: /);
      expect(h.channel.sent).toEqual([]);
    });

    it('claims nothing once stopping has begun', async () => {
      const h = cronHarness();
      const job = await h.createJob.execute({ schedule: '1m', prompt: 'job a' });
      await h.dispatchDueJobs.stop(0);
      h.clock.advance(MINUTE);

      await h.dispatchDueJobs.dispatch();

      expect(h.agent.requests).toHaveLength(0);
      expect(h.repository.get(job.id)!.state).toBe('scheduled');
    });
  });
});

describe('a run refused by pre-dispatch validation', () => {
  it('pauses a one-shot instead of using it up; resuming it after the fix delivers it', async () => {
    const h = cronHarness();
    h.agent.configured = false;
    const job = await h.createJob.execute({ schedule: '1m', prompt: 'job a' });
    h.clock.advance(MINUTE);

    await h.runDueJobs.execute();

    expect(h.agent.requests).toHaveLength(0);
    expect(h.repository.get(job.id)).toMatchObject({
      state: 'paused',
      enabled: false,
      last_status: 'blocked_config',
      repeat: { completed: 0, times: 1 },
    });
    expect(h.repository.get(job.id)!.last_error).toContain('No model is configured');

    h.agent.configured = true;
    h.clock.advance(10 * MINUTE);
    await h.resumeJob.execute({ job: job.id });
    await h.runDueJobs.execute();

    expect(h.agent.requests).toHaveLength(1);
    expect(h.repository.get(job.id)).toMatchObject({ state: 'completed', last_status: 'ok', repeat: { completed: 1 } });
  });

  it('moves a recurring job on to its next slot without counting a run', async () => {
    const h = cronHarness();
    h.agent.configured = false;
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'job a', repeat: 2 });
    h.clock.advance(60 * MINUTE);

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({
      state: 'scheduled',
      enabled: true,
      last_status: 'blocked_config',
      repeat: { completed: 0, times: 2 },
      next_run_at: '2026-06-01T10:00:00Z',
    });
  });
});
