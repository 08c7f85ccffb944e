import { RunClaimants } from '../../src/application/runs/RunClaimants.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { InMemoryReplicaLeases } from '../support/fakes/InMemoryReplicaLeases.js';

const NOW = new Date('2026-06-01T09:00:00Z');
const MINUTE = 60_000;

/** A process table that counts how often each claimant is asked. */
class CountingIdentity extends FakeProcessIdentity {
  readonly asked: string[] = [];

  override isAlive(claimant: string): boolean | 'unknown' {
    this.asked.push(claimant);
    return super.isAlive(claimant);
  }
}

/** Leases of two gateways on other hosts: `db-1:10` stopped renewing a minute ago, `db-2:20` has renewed for five minutes. */
async function sharedStore(): Promise<InMemoryReplicaLeases> {
  const leases = new InMemoryReplicaLeases();
  const replica = (claimant: string, leaseUntil: Date) => ({
    claimant,
    pid: 1,
    host: claimant.split(':')[0]!,
    startedAt: '2026-06-01T08:00:00.000Z',
    listener: null,
    provider: 'built-in',
    leaseUntil,
  });
  await leases.renew(replica('db-1:10', new Date(NOW.getTime() - MINUTE)), 30_000);
  await leases.renew(replica('db-2:20', new Date(NOW.getTime() + 10 * MINUTE)), 15 * MINUTE);
  return leases;
}

describe('the claimants of runs', () => {
  it('name this process as its claims do, and ask the process table whether another lives', () => {
    const identity = new FakeProcessIdentity('test-host:1');
    identity.dead.add('test-host:2');
    const claimants = new RunClaimants(identity);

    expect(claimants.self()).toBe('test-host:1');
    expect(claimants.isAlive('test-host:2')).toBe(false);
    expect(claimants.isAlive('test-host:3')).toBe(true);
    expect(claimants.isAlive('elsewhere:3')).toBe('unknown');
  });

  it('are asked of the process table once each in one look, and again in the next', async () => {
    const identity = new CountingIdentity();
    const claimants = new RunClaimants(identity);

    const { alive } = await claimants.look(['test-host:2', 'test-host:2', null, undefined], NOW);
    alive('test-host:2');
    alive('test-host:2');
    claimants.liveness()('test-host:2');

    expect(identity.asked).toEqual(['test-host:2', 'test-host:2']);
  });

  it('lapse only where gateways share a store: without leases none does, and the process table is not asked', async () => {
    const identity = new CountingIdentity();

    const { lapsed } = await new RunClaimants(identity).look(['db-1:10', 'test-host:2'], NOW);

    expect([...lapsed]).toEqual([]);
    expect(identity.asked).toEqual([]);
  });

  it("on another host are judged by their gateway's lease; those this host can check are not asked of the leases", async () => {
    const leases = await sharedStore();
    const asked: string[][] = [];
    const lapsedOf = leases.lapsed.bind(leases);
    leases.lapsed = async (names, now) => {
      asked.push([...names]);
      return lapsedOf(names, now);
    };
    const claimants = new RunClaimants(new FakeProcessIdentity(), leases);

    const { lapsed } = await claimants.look(['db-1:10', 'db-2:20', 'test-host:2', 'db-1:10'], NOW);

    expect([...lapsed]).toEqual(['db-1:10']);
    expect(asked).toEqual([['db-1:10', 'db-2:20']]);
  });

  it('do not ask the leases when every claimant is on this host', async () => {
    const leases = await sharedStore();
    let asked = 0;
    leases.lapsed = async () => {
      asked += 1;
      return new Set();
    };

    await new RunClaimants(new FakeProcessIdentity(), leases).look(['test-host:2'], NOW);

    expect(asked).toBe(0);
  });
});
