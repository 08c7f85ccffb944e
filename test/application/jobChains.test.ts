import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import { CHAIN_MAX_LINKS, checkChainLinks, conditionMatches, followerStarted, parseChainLink } from '../../src/domain/jobChains.js';
import { cronHarness } from '../support/cronHarness.js';

const HOUR = 3_600_000;
const documentsOf = (h: ReturnType<typeof cronHarness>, index: number) =>
  (h.agent.requests[index]!.context.documents ?? []).map((document) => `${document.name}\n${document.content}`).join('\n');

async function chain(h: ReturnType<typeof cronHarness>, on = 'ok') {
  const a = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Fetch the feeds', name: 'a', deliver: 'local' });
  const b = await h.createJob.execute({ schedule: '', prompt: 'Summarise what a found', name: 'b', deliver: 'local', after: [`a:${on}`] });
  return { a, b };
}

describe('conditions and links', () => {
  it('reads job, job:ok, job:failed and job:any; ok is the default', () => {
    expect(parseChainLink('fetch')).toEqual({ reference: 'fetch', on: 'ok' });
    expect(parseChainLink('fetch:failed')).toEqual({ reference: 'fetch', on: 'failed' });
    expect(parseChainLink('my:job:any')).toEqual({ reference: 'my:job', on: 'any' });
    expect(() => parseChainLink(':ok')).toThrow('names no job to run after');
  });

  it('matches ok to ok, failed to every failure, any to every ending', () => {
    expect(conditionMatches('ok', 'ok')).toBe(true);
    expect(conditionMatches('ok', 'error')).toBe(false);
    for (const status of ['error', 'delivery_failed', 'blocked_config'] as const) expect(conditionMatches('failed', status)).toBe(true);
    expect(conditionMatches('failed', 'ok')).toBe(false);
    expect(conditionMatches('any', 'ok') && conditionMatches('any', 'error')).toBe(true);
  });
});

describe('a followed run cut short', () => {
  it('starts the jobs that run after it on a failure once it is recovered as interrupted', async () => {
    const h = cronHarness();
    const { a, b } = await chain(h, 'failed');
    const claim = { by: 'test-host:7', at: h.clock.now().toISOString() };
    await h.repository.updateById(a.id, (current) => ({ job: { ...current, state: 'running', claim }, result: null }));
    h.identity.dead.add(claim.by);
    h.agent.reply('b answer');

    const tick = await h.runDueJobs.execute();

    expect(tick.recovered.map((job) => job.id)).toEqual([a.id]);
    expect(h.repository.get(b.id)!.chained_from).toMatchObject({ job: a.id, status: 'error', pending: true });
    await h.runDueJobs.execute();
    expect(h.agent.requests).toHaveLength(1);
    expect(h.repository.get(b.id)!.chained_from).toMatchObject({ job: a.id, status: 'error', pending: false });
    expect(documentsOf(h, 0)).toContain(`that job's run ${a.id}.`);
    expect(documentsOf(h, 0)).toContain('ended error');
  });
});

describe('creating and editing chains', () => {
  it('creates a job without a schedule that never fires by itself', async () => {
    const h = cronHarness();
    const { a, b } = await chain(h);
    expect(b).toMatchObject({ schedule: { kind: 'after' }, next_run_at: null, after: [{ job: a.id, on: 'ok' }], state: 'scheduled' });
    h.clock.advance(30 * 24 * HOUR);
    h.agent.reply('a answer', 'b answer');
    await h.runDueJobs.execute();
    // Only a was due; b ran after it (the tick claims what became due meanwhile), once.
    expect(h.agent.requests).toHaveLength(2);
    expect(h.repository.get(b.id)!.chained_from).toMatchObject({ job: a.id, status: 'ok', pending: false });
    expect(h.repository.get(b.id)!.repeat.completed).toBe(1);
  });

  it('refuses a job with neither a schedule nor a job to run after', async () => {
    const h = cronHarness();
    await expect(h.createJob.execute({ schedule: '', prompt: 'x' })).rejects.toThrow(
      'The job has no schedule; give one, or --after <job> to run it after another job.',
    );
  });

  it('refuses a cycle when made, naming it in one sentence', async () => {
    const h = cronHarness();
    await h.createJob.execute({ schedule: 'every 1h', prompt: 'c', name: 'c' });
    await h.createJob.execute({ schedule: '', prompt: 'b', name: 'b', after: ['c'] });
    await h.createJob.execute({ schedule: '', prompt: 'a', name: 'a', after: ['b'] });
    await expect(h.editJob.execute({ job: 'c', after: ['a'] })).rejects.toThrow(
      "Job 'c' cannot run after 'a': 'a' already runs after 'b', which runs after 'c' (a → b → c → a).",
    );
    await expect(h.editJob.execute({ job: 'c', after: ['c'] })).rejects.toThrow("Job 'c' cannot run after itself.");
    expect(h.repository.get((await h.listJobs.execute()).jobs.find((job) => job.name === 'c')!.id)!.after ?? []).toEqual([]);
  });

  it('refuses an 11th link, on create and on edit', async () => {
    const h = cronHarness();
    let previous = await h.createJob.execute({ schedule: 'every 1h', prompt: 'j0', name: 'j0' });
    for (let index = 1; index <= CHAIN_MAX_LINKS; index += 1) {
      previous = await h.createJob.execute({ schedule: '', prompt: `j${index}`, name: `j${index}`, after: [previous.name] });
    }
    await expect(h.createJob.execute({ schedule: '', prompt: 'j11', name: 'j11', after: ['j10'] })).rejects.toThrow(
      "Job 'j11' cannot run after 'j10': the chain would have 11 links, and a chain has at most 10.",
    );
    const head = await h.createJob.execute({ schedule: 'every 1h', prompt: 'head', name: 'head' });
    await expect(h.editJob.execute({ job: 'j0', after: [head.id] })).rejects.toThrow('the chain would have 11 links');
  });

  it('checks the domain rule on its own: a cycle through several jobs', () => {
    const jobs = [
      { id: 'A', name: 'a', after: [{ job: 'B', on: 'ok' as const }] },
      { id: 'B', name: 'b', after: [{ job: 'C', on: 'any' as const }] },
      { id: 'C', name: 'c' },
    ];
    expect(() => checkChainLinks(jobs, { id: 'C', name: 'c' }, [{ job: 'A', on: 'ok' }])).toThrow('(a → b → c → a)');
  });

  it('drops the link of a follower when the job it follows is removed', async () => {
    const h = cronHarness();
    const { a, b } = await chain(h);
    await h.removeJob.execute({ job: a.id });
    expect(h.repository.get(b.id)!.after ?? []).toEqual([]);
  });
});

describe('running a chain', () => {
  it('gives the follower the run id, status and answer of the run it follows, cut to 8 KB', async () => {
    const h = cronHarness();
    const { a, b } = await chain(h);
    h.clock.advance(HOUR);
    h.agent.reply(`Feeds: ${'x'.repeat(9000)}`, 'b answer');
    await h.runDueJobs.execute();
    const [runOfA] = await h.ledger.list({ kind: 'cron', subject: a.id, limit: 1 });
    expect(h.agent.requests).toHaveLength(2);
    const told = documentsOf(h, 1);
    expect(told).toContain(`runs after job 'a' (${a.id}): that job's run ${runOfA!.id} ended ok`);
    expect(told).toContain('Feeds: xxx');
    expect(told).toContain('It was cut to its first 8 KB');
    expect(h.repository.get(b.id)).toMatchObject({
      last_status: 'ok',
      next_run_at: null,
      chained_from: { run_id: runOfA!.id, pending: false },
    });
    // Its next run, by its schedule or a command, is not told of a's run again.
    await h.runDueJobs.execute();
    expect(h.agent.requests).toHaveLength(2);
  });

  it('starts a follower once per run that ended, however often that end is reported', async () => {
    const h = cronHarness();
    const { a, b } = await chain(h);
    h.clock.advance(HOUR);
    h.agent.reply('a answer', 'b answer');
    await h.runDueJobs.execute();
    const [runOfA] = await h.ledger.list({ kind: 'cron', subject: a.id, limit: 1 });
    await h.runDueJobs.execute();
    expect(h.agent.requests).toHaveLength(2);
    // The same end again (another replica, a restart that finishes the run's delivery again): b is not started again.
    const stored = h.repository.get(b.id)!;
    expect(followerStarted(stored, { job: a.id, run_id: runOfA!.id, status: 'ok', at: h.clock.now() })).toBeNull();
    h.clock.advance(60_000);
    await h.runDueJobs.execute();
    expect(h.agent.requests).toHaveLength(2);
  });

  it('starts an :ok follower only after ok, a :failed one only after a failure', async () => {
    const h = cronHarness();
    const { a, b } = await chain(h, 'ok');
    const failed = await h.createJob.execute({
      schedule: '',
      prompt: 'Page someone',
      name: 'pager',
      deliver: 'local',
      after: ['a:failed'],
    });
    h.clock.advance(HOUR);
    h.agent.reply(new AgentRunError('failed', 'The provider refused the key: 401 Unauthorized.'), 'paged');
    await h.runDueJobs.execute();
    expect(h.repository.get(b.id)!.chained_from ?? null).toBeNull();
    expect(h.repository.get(failed.id)!.chained_from).toMatchObject({ job: a.id, status: 'error' });
    await h.runDueJobs.execute();
    expect(documentsOf(h, 1)).toContain('ended error');
    expect(documentsOf(h, 1)).toContain('401 Unauthorized');
  });

  it('leaves a paused follower as it is, and runs a running one again once its run ends', async () => {
    const h = cronHarness();
    const { a, b } = await chain(h);
    await h.pauseJob.execute({ job: b.id });
    h.clock.advance(HOUR);
    h.agent.reply('a answer');
    await h.runDueJobs.execute();
    expect(h.repository.get(b.id)).toMatchObject({ state: 'paused', next_run_at: null });
    expect(h.repository.get(b.id)!.chained_from ?? null).toBeNull();

    const running = { ...h.repository.get(b.id)!, state: 'running' as const };
    const started = followerStarted(running, { job: a.id, run_id: 'r1', status: 'ok', at: h.clock.now() });
    expect(started).toMatchObject({ state: 'running', next_run_at: '2026-06-01T09:00:00Z', chained_from: { pending: true } });
  });

  it('shows what a job follows and what follows it', async () => {
    const h = cronHarness();
    const { a, b } = await chain(h);
    const shownA = await h.showJob.execute({ job: a.id });
    expect(shownA.followers).toEqual([{ id: b.id, name: 'b', on: 'ok' }]);
    const shownB = await h.showJob.execute({ job: b.id });
    expect(shownB.jobNames).toMatchObject({ [a.id]: 'a' });
  });
});
