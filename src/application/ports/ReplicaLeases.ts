import type { GatewayRegistration } from './GatewayRegistry.js';

/** A gateway sharing the job store with others, as its lease says. */
export interface Replica extends GatewayRegistration {
  /** `<host>:<pid>`: what its claims carry. */
  claimant: string;
  /** Until when its lease holds, unless renewed. */
  leaseUntil: Date;
}

/**
 * The gateways sharing one job store (a database): each holds a lease it renews while it runs.
 * A replica whose lease lapsed is dead for every other: the runs it claimed are recovered.
 */
export interface ReplicaLeases {
  /** Takes or renews `replica`'s lease until `replica.leaseUntil`. */
  renew(replica: Replica): Promise<void>;
  /** Gives the lease up (a gateway stopping cleanly). Never throws. */
  release(claimant: string): Promise<void>;
  /** The replicas whose lease holds at `now`, oldest first. */
  live(now: Date): Promise<Replica[]>;
  /** Of `claimants`, those that held a lease which lapsed before `now` (claimants that never held one are not among them). */
  lapsed(claimants: readonly string[], now: Date): Promise<Set<string>>;
}
