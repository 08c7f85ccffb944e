import { PostgresReplicaLeases } from '../../../src/adapters/postgres/PostgresReplicaLeases.js';
import type { PostgresDatabase } from '../../../src/adapters/postgres/PostgresDatabase.js';
import type { Replica } from '../../../src/application/ports/ReplicaLeases.js';
import { scratchDatabase, type ScratchDatabase } from '../../helpers/postgres.js';

const T0 = new Date('2026-06-01T08:00:00Z');
const later = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const replica = (pid: number, leaseUntil: Date): Replica => ({
  claimant: `host-${pid}:${pid}`,
  host: `host-${pid}`,
  pid,
  startedAt: '2026-06-01T07:00:00Z',
  listener: null,
  provider: 'built-in',
  leaseUntil,
});

describe('gateway leases on PostgreSQL', () => {
  let scratch: ScratchDatabase;
  let database: PostgresDatabase;
  let leases: PostgresReplicaLeases;

  beforeAll(async () => {
    scratch = await scratchDatabase();
    database = await scratch.open();
  });

  beforeEach(async () => {
    await database.query('TRUNCATE agent_gateways');
    leases = new PostgresReplicaLeases(database);
  });

  afterAll(async () => {
    await database?.close();
    await scratch?.drop();
  });

  it('lists the replicas whose lease holds, and renewing moves a lease on', async () => {
    await leases.renew(replica(1, later(30)));
    await leases.renew(replica(2, later(10)));

    expect((await leases.live(later(20))).map((each) => each.pid)).toEqual([1]);
    await leases.renew(replica(2, later(40)));
    expect((await leases.live(later(20))).map((each) => each.pid)).toEqual([1, 2]);
    expect((await leases.live(later(20)))[0]).toEqual(replica(1, later(30)));
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

    expect(await leases.live(T0)).toEqual([]);
    expect(await leases.lapsed(['host-1:1'], later(60))).toEqual(new Set());
  });
});
