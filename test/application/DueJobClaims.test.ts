import { DueJobClaims } from '../../src/application/cron/DueJobClaims.js';
import { cronHarness } from '../support/cronHarness.js';

const MINUTE = 60_000;

function subject(options: Parameters<typeof cronHarness>[0] = {}) {
  const h = cronHarness(options);
  const claims = new DueJobClaims(h.repository, h.tickLock, h.clock, h.claimants, h.settings);
  return { h, claims };
}

describe("the job store's side of the tick's claim", () => {
  it('finds nothing to do, without writing, while no job is due and none runs', async () => {
    const { h, claims } = subject();
    await h.createJob.execute({ schedule: 'every 30m', prompt: 'Check the queue' });
    const writes = h.repository.writes;

    const look = await claims.look(h.clock.now(), h.clock.now());

    expect(look).toMatchObject({ needed: false, abandoned: false });
    expect(h.repository.writes).toBe(writes);
    expect(h.tickLock.acquisitions).toBe(0);
  });

  it('claims the due jobs earliest first, as many as the limit, leaves the rest waiting and releases the lock', async () => {
    const { h, claims } = subject();
    const late = await h.createJob.execute({ schedule: 'every 30m', prompt: 'Late', name: 'late' });
    const early = await h.createJob.execute({ schedule: 'every 10m', prompt: 'Early', name: 'early' });
    h.clock.advance(30 * MINUTE);
    const look = await claims.look(h.clock.now(), h.clock.now());

    const locked = await claims.claimUnderLock(h.clock.now(), 1, undefined, look);

    expect(look.needed).toBe(true);
    expect(locked?.claims.claimed.map((each) => each.job.id)).toEqual([early.id]);
    expect(locked?.claims.waiting.map((job) => job.id)).toEqual([late.id]);
    expect(h.repository.get(early.id)).toMatchObject({ state: 'running', claim: { by: 'test-host:1' } });
    expect(h.repository.get(late.id)?.state).toBe('scheduled');
    expect(h.tickLock.held).toBe(false);
  });

  it('claims nothing and writes nothing while another process holds the tick lock', async () => {
    const { h, claims } = subject();
    const job = await h.createJob.execute({ schedule: '1m', prompt: 'Ping' });
    h.clock.advance(MINUTE);
    h.tickLock.heldElsewhere = true;
    const writes = h.repository.writes;

    const locked = await claims.claimUnderLock(h.clock.now(), 4, undefined, await claims.look(h.clock.now(), h.clock.now()));

    expect(locked).toBeNull();
    expect(h.repository.writes).toBe(writes);
    expect(h.repository.get(job.id)?.state).toBe('scheduled');
  });

  it('recovers a running job whose claimant is gone, with the claim it had, and names that claimant gone', async () => {
    const { h, claims } = subject();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Hourly' });
    const claim = { by: 'test-host:8', at: '2026-06-01T08:00:00Z' };
    await h.repository.modify((jobs) => ({ jobs: jobs.map((j) => ({ ...j, state: 'running' as const, claim })), result: undefined }));
    h.identity.dead.add('test-host:8');

    const look = await claims.look(h.clock.now(), h.clock.now());
    const locked = await claims.claimUnderLock(h.clock.now(), 4, undefined, look);

    expect(look).toMatchObject({ needed: true, abandoned: true });
    expect(locked?.claims.recovered.map((each) => each.id)).toEqual([job.id]);
    expect(locked?.recoveredFrom).toEqual([{ job: expect.objectContaining({ id: job.id, state: 'scheduled' }), claim }]);
    expect(claims.goneClaimants(locked!.recoveredFrom)).toEqual(['test-host:8']);
    expect(h.repository.get(job.id)).toMatchObject({
      state: 'scheduled',
      last_error: 'interrupted: the process test-host:8 that ran it is gone',
    });
  });

  it('leaves a running job alone while its claimant lives', async () => {
    const { h, claims } = subject();
    await h.createJob.execute({ schedule: 'every 1h', prompt: 'Hourly' });
    const claim = { by: 'test-host:8', at: '2026-06-01T08:00:00Z' };
    await h.repository.modify((jobs) => ({ jobs: jobs.map((j) => ({ ...j, state: 'running' as const, claim })), result: undefined }));

    const look = await claims.look(h.clock.now(), h.clock.now());

    expect(look).toMatchObject({ needed: false, abandoned: false });
  });

  it('skips the overdue slot of a job whose catch-up policy is skip, and says why', async () => {
    const { h, claims } = subject({ settings: { catchUp: 'skip' } });
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Hourly' });
    h.clock.advance(3 * 60 * MINUTE + 5 * MINUTE);

    const locked = await claims.claimUnderLock(h.clock.now(), 4, undefined, await claims.look(h.clock.now(), h.clock.now()));

    expect(locked?.claims.claimed).toEqual([]);
    expect(locked?.claims.skipped).toEqual([
      expect.objectContaining({ job: expect.objectContaining({ id: job.id, next_run_at: '2026-06-01T12:05:00Z' }), missedSlots: 3 }),
    ]);
    expect(locked?.claims.skipped[0]?.reason).toMatch(/^skipped: the job was due at 2026-06-01T09:00:00Z .*3 slots missed/);
  });

  describe('claiming ahead of the slots (the gateway, docs/gateway.md)', () => {
    it('claims a job due within the lead, dated at its slot, with its next slot counted from that slot', async () => {
      const { h, claims } = subject();
      const job = await h.createJob.execute({ schedule: '*/5 * * * *', prompt: 'Every five minutes', name: 'five' });
      const slot = new Date(job.next_run_at!);
      h.clock.set(new Date(slot.getTime() - 800));
      const look = await claims.look(h.clock.now(), new Date(slot.getTime() + 200));

      const locked = await claims.claimUnderLock(h.clock.now(), 4, undefined, look, 1000);

      expect(look.needed).toBe(true);
      expect(locked?.claims.claimed).toEqual([{ job: expect.objectContaining({ id: job.id }), dueAt: slot }]);
      expect(h.repository.get(job.id)).toMatchObject({
        state: 'running',
        claim: { by: 'test-host:1', at: slot.toISOString().replace('.000Z', 'Z') },
        // Counted from the slot, not from now (which would give the slot itself again).
        next_run_at: new Date(slot.getTime() + 5 * MINUTE).toISOString().replace('.000Z', 'Z'),
      });
      expect(locked?.claims.missed).toEqual([]);
    });

    it('claims the next slot of a job whose runs may overlap beside its run, ahead, as at that slot', async () => {
      const { h, claims } = subject();
      const job = await h.createJob.execute({ schedule: 'every 10m', prompt: 'x', name: 'beside', overlap: 'allow' });
      h.clock.set(new Date(job.next_run_at!));
      await claims.claimUnderLock(h.clock.now(), 4, undefined, await claims.look(h.clock.now(), h.clock.now()));
      const slot = new Date(h.repository.get(job.id)!.next_run_at!);
      h.clock.set(new Date(slot.getTime() - 500));

      const ahead = new Date(slot.getTime() + 500);
      const locked = await claims.claimUnderLock(h.clock.now(), 4, undefined, await claims.look(h.clock.now(), ahead), 1000);

      expect(locked?.claims.claimed.map((each) => each.dueAt)).toEqual([slot]);
      expect(h.repository.get(job.id)).toMatchObject({
        state: 'running',
        claims_beside: [{ by: 'test-host:1', at: slot.toISOString().replace('.000Z', 'Z') }],
        next_run_at: new Date(slot.getTime() + 10 * MINUTE).toISOString().replace('.000Z', 'Z'),
      });
    });

    it('leaves a job due after the lead alone, and a job not yet due out of the waiting list when no slot is free', async () => {
      const { h, claims } = subject();
      const job = await h.createJob.execute({ schedule: '*/5 * * * *', prompt: 'Every five minutes', name: 'five' });
      const slot = new Date(job.next_run_at!);
      h.clock.set(new Date(slot.getTime() - 1500));
      const farLook = await claims.look(h.clock.now(), new Date(h.clock.now().getTime() + 1000));
      const far = await claims.claimUnderLock(h.clock.now(), 4, undefined, farLook, 1000);
      h.clock.set(new Date(slot.getTime() - 500));
      const nearLook = await claims.look(h.clock.now(), new Date(h.clock.now().getTime() + 1000));
      const full = await claims.claimUnderLock(h.clock.now(), 0, undefined, nearLook, 1000);

      expect(farLook.needed).toBe(false);
      expect(far?.claims.claimed).toEqual([]);
      expect(full?.claims).toMatchObject({ claimed: [], waiting: [], missed: [] });
      expect(h.repository.get(job.id)?.state).toBe('scheduled');
    });
  });
});
