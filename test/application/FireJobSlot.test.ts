import { FireJobSlot } from '../../src/application/cron/FireJobSlot.js';
import type { JobRepository } from '../../src/application/ports/JobRepository.js';
import { JobStoreUnavailableError } from '../../src/application/ports/JobRepository.js';
import { cronHarness } from '../support/cronHarness.js';

const MINUTE = 60_000;

const settle = async () => {
  for (let i = 0; i < 10; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

function fireHarness(options: Parameters<typeof cronHarness>[0] = {}, repository?: JobRepository) {
  const h = cronHarness(options);
  const fire = new FireJobSlot(repository ?? h.repository, h.clock, h.identity, h.settings, h.dispatchDueJobs, h.log);
  const finished: string[] = [];
  fire.onRunFinished((jobId) => finished.push(jobId));
  return { ...h, fire, finished };
}

describe('firing one slot of a job (FireJobSlot)', () => {
  it('claims the slot, answers accepted and runs the job once, its next slot counted from the slot fired', async () => {
    const h = fireHarness();
    const job = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a', name: 'a' });

    // The portal's clock decides: the slot is still a minute ahead on ours.
    h.clock.advance(4 * MINUTE);
    const outcome = await h.fire.execute({ jobId: job.id, fireAt: job.next_run_at! });
    await settle();

    expect(outcome).toEqual({ status: 'accepted', jobId: job.id });
    expect(h.agent.requests).toHaveLength(1);
    expect(h.finished).toEqual([job.id]);
    const stored = h.repository.get(job.id)!;
    expect(stored).toMatchObject({ state: 'scheduled', last_status: 'ok' });
    expect(Date.parse(stored.next_run_at!)).toBe(Date.parse(job.next_run_at!) + 5 * MINUTE);
  });

  it('answers stale, without a run, for a second fire of the same slot', async () => {
    const h = fireHarness();
    const job = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a' });
    h.clock.advance(5 * MINUTE);

    await h.fire.execute({ jobId: job.id, fireAt: job.next_run_at! });
    await settle();
    const again = await h.fire.execute({ jobId: job.id, fireAt: job.next_run_at! });
    await settle();

    expect(again).toEqual({ status: 'stale' });
    expect(h.agent.requests).toHaveLength(1);
  });

  it("answers stale for an instant that is not the job's next_run_at, and for a fire_at that is no instant", async () => {
    const h = fireHarness();
    const job = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a' });

    expect(await h.fire.execute({ jobId: job.id, fireAt: new Date(Date.parse(job.next_run_at!) - MINUTE).toISOString() })).toEqual({
      status: 'stale',
    });
    expect(await h.fire.execute({ jobId: job.id, fireAt: 'soon' })).toEqual({ status: 'stale' });
    await settle();
    expect(h.agent.requests).toHaveLength(0);
    expect(h.repository.get(job.id)).toMatchObject({ state: 'scheduled', next_run_at: job.next_run_at });
  });

  it('compares instants, not spellings: the same instant with an offset is claimed', async () => {
    const h = fireHarness();
    const job = await h.createJob.execute({ schedule: '2026-06-01T10:30:00Z', prompt: 'job a' });

    const outcome = await h.fire.execute({ jobId: job.id, fireAt: '2026-06-01T12:30:00.000+02:00' });
    await settle();

    expect(outcome.status).toBe('accepted');
    expect(h.repository.get(job.id)).toMatchObject({ state: 'completed', next_run_at: null });
  });

  it('answers gone, without a run, for an unknown, a paused and a completed job', async () => {
    const h = fireHarness();
    const paused = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job p' });
    await h.pauseJob.execute({ job: paused.id });
    const once = await h.createJob.execute({ schedule: '1m', prompt: 'job o' });
    await h.fire.execute({ jobId: once.id, fireAt: once.next_run_at! });
    await settle();

    expect(await h.fire.execute({ jobId: 'nosuchjob', fireAt: once.next_run_at! })).toEqual({ status: 'gone' });
    expect(await h.fire.execute({ jobId: paused.id, fireAt: paused.next_run_at! })).toEqual({ status: 'gone' });
    expect(await h.fire.execute({ jobId: once.id, fireAt: once.next_run_at! })).toEqual({ status: 'gone' });
    await settle();
    expect(h.agent.requests).toHaveLength(1);
  });

  it('runs exactly one of several concurrent fires of one slot', async () => {
    const h = fireHarness();
    const job = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a' });

    const outcomes = await Promise.all(Array.from({ length: 5 }, () => h.fire.execute({ jobId: job.id, fireAt: job.next_run_at! })));
    await settle();

    expect(outcomes.filter((outcome) => outcome.status === 'accepted')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.status === 'stale')).toHaveLength(4);
    expect(h.agent.requests).toHaveLength(1);
  });

  it('answers unavailable, retry after 5 s, when the store cannot be read', async () => {
    const h = fireHarness();
    const locked = () => Promise.reject(new JobStoreUnavailableError('The job store is locked.'));
    const broken: JobRepository = {
      load: locked,
      findById: locked,
      create: locked,
      update: locked,
      updateById: locked,
      remove: locked,
      followersOf: locked,
      nextRunAt: locked,
      peek: locked,
      settleDue: locked,
    };
    const fire = new FireJobSlot(broken, h.clock, h.identity, h.settings, h.dispatchDueJobs, h.log);

    expect(await fire.execute({ jobId: 'x', fireAt: '2026-06-01T08:05:00Z' })).toEqual({ status: 'unavailable', retryAfterSeconds: 5 });
    expect(h.log.entries.some((entry) => entry.level === 'error' && /could not be claimed/.test(entry.message))).toBe(true);
  });

  it('answers unavailable, without claiming, once the gateway is stopping', async () => {
    const h = fireHarness();
    const job = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a' });
    await h.dispatchDueJobs.stop(0);

    expect(await h.fire.execute({ jobId: job.id, fireAt: job.next_run_at! })).toEqual({ status: 'unavailable', retryAfterSeconds: 10 });
    expect(h.repository.get(job.id)).toMatchObject({ state: 'scheduled', claim: null });
  });

  it('holds a fired run while every run slot is busy and starts it when one frees', async () => {
    const h = fireHarness({ settings: { maxParallelJobs: 1 } });
    const answers: Array<(text: string) => void> = [];
    h.agent.defaultReply = () => new Promise<string>((resolve) => answers.push(resolve));
    const a = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a' });
    const b = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job b' });

    expect((await h.fire.execute({ jobId: a.id, fireAt: a.next_run_at! })).status).toBe('accepted');
    expect((await h.fire.execute({ jobId: b.id, fireAt: b.next_run_at! })).status).toBe('accepted');
    await settle();
    expect(h.agent.requests).toHaveLength(1);
    // Claimed all the same: a second fire of its slot is stale.
    expect(h.repository.get(b.id)!.state).toBe('running');

    answers[0]!('done');
    await settle();
    expect(h.agent.requests).toHaveLength(2);
    answers[1]!('done');
    await settle();
    expect(h.finished.sort()).toEqual([a.id, b.id].sort());
  });
});

/** The harness's store, except that each `updateById` (a fire's claim) waits until the test lets it go on. */
function gatedStore(inner: JobRepository) {
  const waiting: Array<{ id: string; go: () => void }> = [];
  let open = false;
  const repository: JobRepository = {
    load: () => inner.load(),
    findById: (id) => inner.findById(id),
    create: (job, nameWasChosen) => inner.create(job, nameWasChosen),
    update: (reference, change) => inner.update(reference, change),
    updateById: async (id, change) => {
      if (!open) await new Promise<void>((go) => waiting.push({ id, go }));
      return inner.updateById(id, change);
    },
    remove: (reference) => inner.remove(reference),
    followersOf: (id) => inner.followersOf(id),
    nextRunAt: (after) => inner.nextRunAt(after),
    peek: (dueBy) => inner.peek(dueBy),
    settleDue: (dueBy, limit, settle) => inner.settleDue(dueBy, limit, settle),
  };
  /** Lets the claims waiting go on, and every later one through. */
  const releaseAll = () => {
    open = true;
    for (const claim of waiting.splice(0)) claim.go();
  };
  /** Lets the claims waiting go on; later ones wait again. */
  const releaseWaiting = () => {
    for (const claim of waiting.splice(0)) claim.go();
  };
  return { repository, waiting, releaseAll, releaseWaiting };
}

describe('fires arriving together', () => {
  function gatedHarness(options: Parameters<typeof cronHarness>[0] = {}) {
    const h = cronHarness(options);
    const store = gatedStore(h.repository);
    const fire = new FireJobSlot(store.repository, h.clock, h.identity, h.settings, h.dispatchDueJobs, h.log);
    return { ...h, fire, store };
  }

  it('claims the slots of different jobs side by side: the second claim reaches the store while the first is under way', async () => {
    const h = gatedHarness();
    const a = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a' });
    const b = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job b' });

    const outcomes = Promise.all([
      h.fire.execute({ jobId: a.id, fireAt: a.next_run_at! }),
      h.fire.execute({ jobId: b.id, fireAt: b.next_run_at! }),
    ]);
    await settle();
    expect(h.store.waiting.map((claim) => claim.id)).toEqual([a.id, b.id]);

    h.store.releaseAll();
    expect((await outcomes).map((outcome) => outcome.status)).toEqual(['accepted', 'accepted']);
    await settle();
    expect(h.agent.requests).toHaveLength(2);
  });

  it('answers a second fire of a slot being claimed from that claim: stale once it is accepted, without claiming again', async () => {
    const h = gatedHarness();
    const job = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a' });

    const outcomes = Promise.all([0, 1].map(() => h.fire.execute({ jobId: job.id, fireAt: job.next_run_at! })));
    await settle();
    expect(h.store.waiting).toHaveLength(1);
    h.store.releaseAll();

    expect(await outcomes).toEqual([{ status: 'accepted', jobId: job.id }, { status: 'stale' }]);
    await settle();
    expect(h.agent.requests).toHaveLength(1);
    expect(h.log.entries.some((entry) => entry.message === `fire of job ${job.id} for ${job.next_run_at}: stale`)).toBe(true);
  });

  it('gives a second fire of a slot being claimed the same answer when that claim finds the job gone', async () => {
    const h = gatedHarness();
    const job = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a' });
    await h.pauseJob.execute({ job: job.id });

    const outcomes = Promise.all([0, 1].map(() => h.fire.execute({ jobId: job.id, fireAt: job.next_run_at! })));
    await settle();
    expect(h.store.waiting).toHaveLength(1);
    h.store.releaseAll();

    expect(await outcomes).toEqual([{ status: 'gone' }, { status: 'gone' }]);
  });

  it('claims a slot again once the claim of it is over: a later fire goes to the store and is stale there', async () => {
    const h = gatedHarness();
    const job = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a' });
    const first = h.fire.execute({ jobId: job.id, fireAt: job.next_run_at! });
    await settle();
    h.store.releaseWaiting();
    await first;

    const later = h.fire.execute({ jobId: job.id, fireAt: job.next_run_at! });
    await settle();
    expect(h.store.waiting).toHaveLength(1);
    h.store.releaseWaiting();
    expect(await later).toEqual({ status: 'stale' });
  });

  it('stopping waits for a claim under way, whose run then starts and gets the grace period', async () => {
    const h = gatedHarness();
    const job = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job a' });
    const fired = h.fire.execute({ jobId: job.id, fireAt: job.next_run_at! });
    await settle();

    let stopped = false;
    const stopping = h.dispatchDueJobs.stop(60_000).then((finished) => {
      stopped = true;
      return finished;
    });
    await settle();
    expect(stopped).toBe(false);

    h.store.releaseAll();
    expect(await fired).toEqual({ status: 'accepted', jobId: job.id });
    expect(await stopping).toBe(true);
    expect(h.agent.requests).toHaveLength(1);
    expect(h.repository.get(job.id)).toMatchObject({ state: 'scheduled', last_status: 'ok' });
  });

  it('a look for due jobs waits for the fires claimed before it, so it never starts more runs than cron.max_parallel_jobs', async () => {
    const h = gatedHarness({ settings: { maxParallelJobs: 1 } });
    const answers: Array<(text: string) => void> = [];
    h.agent.defaultReply = () => new Promise<string>((resolve) => answers.push(resolve));
    const fired = await h.createJob.execute({ schedule: 'every 5m', prompt: 'job fired' });
    const due = await h.createJob.execute({ schedule: '1m', prompt: 'job due' });
    h.clock.advance(MINUTE);

    const fire = h.fire.execute({ jobId: fired.id, fireAt: fired.next_run_at! });
    await settle();
    const look = h.dispatchDueJobs.dispatch();
    await settle();
    h.store.releaseAll();

    expect((await fire).status).toBe('accepted');
    expect((await look).waiting).toBe(1);
    await settle();
    expect(h.agent.requests).toHaveLength(1);
    // Never claimed: the slot went to the fire.
    expect(h.repository.get(due.id)).toMatchObject({ state: 'scheduled', claim: null });
    answers[0]!('done');
    await settle();
  });
});
