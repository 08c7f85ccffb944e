import type { Replica, ReplicaLeases } from '../../src/application/ports/ReplicaLeases.js';

const T0 = new Date('2026-06-01T08:00:00Z');
const later = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const replica = (pid: number, leaseUntil: Date, startedAt = `2026-06-01T07:00:0${pid % 10}Z`): Replica => ({
  claimant: `host-${pid}:${pid}`,
  host: `host-${pid}`,
  pid,
  startedAt,
  listener: null,
  provider: 'built-in ticker',
  leaseUntil,
});

/**
 * What every store of the replicas' leases promises (the gateway registry of a shared store, as
 * `agent status` reads it): the fake, and PostgreSQL. `make` gives an empty store.
 */
export function describeReplicaLeasesContract(name: string, make: () => Promise<ReplicaLeases>): void {
  describe(`${name} (ReplicaLeases contract)`, () => {
    let leases: ReplicaLeases;

    beforeEach(async () => {
      leases = await make();
    });

    it('lists the replicas whose lease holds, oldest first, and a renewal moves a lease on', async () => {
      await leases.renew(replica(2, later(30)));
      await leases.renew(replica(1, later(10)));

      expect((await leases.live(later(20))).map((each) => each.pid)).toEqual([2]);
      await leases.renew(replica(1, later(40)));
      expect((await leases.live(later(20))).map((each) => each.pid)).toEqual([1, 2]);
      expect((await leases.live(later(20)))[1]).toEqual(replica(2, later(30)));
    });

    it('keeps what a renewal says of the listener and the provider, and the start of the first', async () => {
      await leases.renew(replica(1, later(10)));
      await leases.renew({ ...replica(1, later(20), '2026-06-01T07:59:00Z'), listener: '0.0.0.0:8644', provider: 'managed' });

      expect(await leases.live(T0)).toEqual([{ ...replica(1, later(20)), listener: '0.0.0.0:8644', provider: 'managed' }]);
    });

    it("keeps what the latest renewal says of the replica's chat receivers", async () => {
      const down = [{ platform: 'slack', state: 'down' as const, since: '2026-06-01T08:00:00.000Z', error: 'auth.test failed (HTTP 503)' }];
      await leases.renew({ ...replica(1, later(10)), chatReceivers: down });
      expect((await leases.live(T0))[0]!.chatReceivers).toEqual(down);
      const up = [{ platform: 'slack', state: 'up' as const, since: '2026-06-01T08:00:30.000Z', error: null }];
      await leases.renew({ ...replica(1, later(20)), chatReceivers: up });
      expect((await leases.live(T0))[0]!.chatReceivers).toEqual(up);
    });

    it('names as lapsed only claimants whose lease ran out, not those that never held one', async () => {
      await leases.renew(replica(1, later(30)));
      await leases.renew(replica(2, later(10)));

      expect(await leases.lapsed(['host-1:1', 'host-2:2', 'laptop:77'], later(20))).toEqual(new Set(['host-2:2']));
      expect(await leases.lapsed([], later(20))).toEqual(new Set());
    });

    it('forgets a released lease: a gateway that stopped cleanly is neither live nor lapsed', async () => {
      await leases.renew(replica(1, later(30)));
      await leases.release('host-1:1');
      await leases.release('never-held:1');

      expect(await leases.live(T0)).toEqual([]);
      expect(await leases.lapsed(['host-1:1'], later(60))).toEqual(new Set());
    });
  });
}
