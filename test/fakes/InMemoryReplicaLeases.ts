import type { Replica, ReplicaLeases } from '../../src/application/ports/ReplicaLeases.js';

/** ReplicaLeases in memory: the leases of the replicas of one test, by claimant. */
export class InMemoryReplicaLeases implements ReplicaLeases {
  private readonly leases = new Map<string, Replica>();

  async renew(replica: Replica): Promise<void> {
    const held = this.leases.get(replica.claimant);
    // A renewal moves the lease on and says where the gateway listens now; its start stays.
    this.leases.set(replica.claimant, held ? { ...held, listener: replica.listener, provider: replica.provider, leaseUntil: replica.leaseUntil, chatReceivers: replica.chatReceivers } : { ...replica });
  }

  async release(claimant: string): Promise<void> {
    this.leases.delete(claimant);
  }

  async live(now: Date): Promise<Replica[]> {
    return [...this.leases.values()]
      .filter((lease) => lease.leaseUntil.getTime() >= now.getTime())
      .sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.claimant.localeCompare(b.claimant))
      .map((lease) => ({ ...lease }));
  }

  async lapsed(claimants: readonly string[], now: Date): Promise<Set<string>> {
    return new Set(claimants.filter((claimant) => (this.leases.get(claimant)?.leaseUntil.getTime() ?? Number.POSITIVE_INFINITY) < now.getTime()));
  }
}
