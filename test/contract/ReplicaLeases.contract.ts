import { setTimeout as sleep } from 'node:timers/promises';
import type { Replica, ReplicaLeases } from '../../src/application/ports/ReplicaLeases.js';

const MINUTE = 60_000;
/** Replica `pid`'s lease, for `leaseMs` from now on this process's clock (a store with a clock of its own uses that instead). */
const replica = (pid: number, leaseMs: number, startedAt = `2026-06-01T07:00:0${pid % 10}Z`): Replica => ({
  claimant: `host-${pid}:${pid}`,
  host: `host-${pid}`,
  pid,
  startedAt,
  listener: null,
  provider: 'built-in ticker',
  leaseUntil: new Date(Date.now() + leaseMs),
});
/** What a lease says, but until when it holds (each store says that on its own clock). */
const said = ({ leaseUntil: _until, ...rest }: Replica) => rest;
/** Long enough for a lease of `ms` to have lapsed, on any clock. */
const pastLease = (ms: number) => sleep(ms + 100);

/**
 * What every store of the replicas' leases promises (the gateway registry of a shared store, as
 * `agent status` reads it): the fake, and PostgreSQL. `make` gives an empty store, as one
 * process holds it. Leases are judged on the store's clock (the callers' for the fake, the
 * database's on PostgreSQL), so these tests let short leases lapse for real.
 */
export function describeReplicaLeasesContract(name: string, make: () => Promise<ReplicaLeases>): void {
  describe(`${name} (ReplicaLeases contract)`, () => {
    let leases: ReplicaLeases;

    beforeEach(async () => {
      leases = await make();
    });

    it('lists the replicas whose lease holds, oldest first, and a renewal moves a lease on', async () => {
      await leases.renew(replica(2, MINUTE), MINUTE);
      await leases.renew(replica(1, 1), 1);
      await pastLease(1);

      expect((await leases.live(new Date())).map((each) => each.pid)).toEqual([2]);
      await leases.renew(replica(1, MINUTE), MINUTE);
      const live = await leases.live(new Date());
      expect(live.map((each) => each.pid)).toEqual([1, 2]);
      expect(said(live[1]!)).toEqual(said(replica(2, MINUTE)));
      expect(live[1]!.leaseUntil.getTime()).toBeGreaterThan(Date.now() + MINUTE / 2);
    });

    it('keeps what a renewal says of the listener and the provider, and the start of the first', async () => {
      await leases.renew(replica(1, MINUTE), MINUTE);
      await leases.renew({ ...replica(1, MINUTE, '2026-06-01T07:59:00Z'), listener: '0.0.0.0:8644', provider: 'managed' }, MINUTE);

      expect((await leases.live(new Date())).map(said)).toEqual([
        { ...said(replica(1, MINUTE)), listener: '0.0.0.0:8644', provider: 'managed' },
      ]);
    });

    it("keeps what the latest renewal says of the replica's chat receivers", async () => {
      const down = [{ platform: 'slack', state: 'down' as const, since: '2026-06-01T08:00:00.000Z', error: 'auth.test failed (HTTP 503)' }];
      await leases.renew({ ...replica(1, MINUTE), chatReceivers: down }, MINUTE);
      expect((await leases.live(new Date()))[0]!.chatReceivers).toEqual(down);
      const up = [{ platform: 'slack', state: 'up' as const, since: '2026-06-01T08:00:30.000Z', error: null }];
      await leases.renew({ ...replica(1, MINUTE), chatReceivers: up }, MINUTE);
      expect((await leases.live(new Date()))[0]!.chatReceivers).toEqual(up);
    });

    it('says of each renewal whether the lease was taken, held, or had lapsed and is resumed, in one term', async () => {
      const first = await leases.renew(replica(1, 1), 1);
      expect(first.state).toBe('taken');
      await pastLease(1);
      expect(await leases.renew(replica(1, MINUTE), MINUTE)).toEqual({ epoch: first.epoch, state: 'resumed' });
      expect(await leases.renew(replica(1, MINUTE), MINUTE)).toEqual({ epoch: first.epoch, state: 'held' });
    });

    it('names as lapsed only claimants whose lease ran out, not those that never held one', async () => {
      await leases.renew(replica(1, MINUTE), MINUTE);
      await leases.renew(replica(2, 1), 1);
      await pastLease(1);

      expect(await leases.lapsed(['host-1:1', 'host-2:2', 'laptop:77'], new Date())).toEqual(new Set(['host-2:2']));
      expect(await leases.lapsed([], new Date())).toEqual(new Set());
    });

    it('names a lapsed lease only once another has been renewed without a break for that lease since (after an outage of the store)', async () => {
      const leaseMs = 3_000;
      await leases.renew(replica(2, leaseMs), leaseMs);
      await pastLease(leaseMs);
      // The store was away for everyone: replica 1 is back and renewed a moment ago, 2 is not back yet.
      await leases.renew(replica(1, MINUTE), MINUTE);
      expect(await leases.lapsed(['host-2:2'], new Date())).toEqual(new Set());

      await pastLease(leaseMs);
      expect(await leases.lapsed(['host-2:2'], new Date())).toEqual(new Set(['host-2:2']));
    });

    it('forgets a released lease: a gateway that stopped cleanly is neither live nor lapsed', async () => {
      await leases.renew(replica(1, MINUTE), MINUTE);
      await leases.release('host-1:1');
      await leases.release('never-held:1');

      expect(await leases.live(new Date())).toEqual([]);
      expect(await leases.lapsed(['host-1:1'], new Date(Date.now() + 2 * MINUTE))).toEqual(new Set());
    });
  });
}
