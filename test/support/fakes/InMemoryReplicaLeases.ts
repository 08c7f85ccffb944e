import type { LeaseRenewal, Replica, ReplicaLeases } from '../../../src/application/ports/ReplicaLeases.js';

interface Held extends Replica {
  epoch: number;
  leaseMs: number;
  /** Since when (the caller's `leaseUntil - leaseMs`) it was renewed without a break. */
  connectedSince: number;
}

/**
 * ReplicaLeases in memory: the leases of the replicas of one test, by claimant, on the callers'
 * clocks (each renewal's `leaseUntil`, each question's `now`). A lapsed lease is judged gone, as
 * on PostgreSQL, only once another lease that holds was renewed without a break for a lease since.
 */
export class InMemoryReplicaLeases implements ReplicaLeases {
  private readonly leases = new Map<string, Held>();

  async renew(replica: Replica, leaseMs: number): Promise<LeaseRenewal> {
    const held = this.leases.get(replica.claimant);
    const at = replica.leaseUntil.getTime() - leaseMs;
    // A renewal moves the lease on and says where the gateway listens now; its start stays.
    const lapsed = held !== undefined && held.leaseUntil.getTime() < at;
    this.leases.set(
      replica.claimant,
      held
        ? {
            ...held,
            listener: replica.listener,
            provider: replica.provider,
            leaseUntil: replica.leaseUntil,
            chatReceivers: replica.chatReceivers,
            leaseMs,
            connectedSince: lapsed ? at : held.connectedSince,
          }
        : { ...replica, epoch: 1, leaseMs, connectedSince: at },
    );
    return { epoch: held?.epoch ?? 1, state: held ? (lapsed ? 'resumed' : 'held') : 'taken' };
  }

  async release(claimant: string): Promise<void> {
    this.leases.delete(claimant);
  }

  async live(now: Date): Promise<Replica[]> {
    return [...this.leases.values()]
      .filter((lease) => lease.leaseUntil.getTime() >= now.getTime())
      .sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.claimant.localeCompare(b.claimant))
      .map(({ epoch: _epoch, leaseMs: _leaseMs, connectedSince: _since, ...lease }) => ({ ...lease }));
  }

  async lapsed(claimants: readonly string[], now: Date): Promise<Set<string>> {
    const t = now.getTime();
    return new Set(
      claimants.filter((claimant) => {
        const lease = this.leases.get(claimant);
        if (!lease || lease.leaseUntil.getTime() >= t) return false;
        return [...this.leases.values()].some(
          (witness) => witness.leaseUntil.getTime() >= t && witness.connectedSince <= t - lease.leaseMs,
        );
      }),
    );
  }
}
