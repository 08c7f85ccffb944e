import type { GatewayRegistration } from './GatewayRegistry.js';

/** A gateway sharing the job store with others, as its lease says. */
export interface Replica extends GatewayRegistration {
  /** `<host>:<pid>`: what its claims carry. */
  claimant: string;
  /** Until when its lease holds, unless renewed (a store with a clock of its own says it on that clock). */
  leaseUntil: Date;
}

/** What a renewal found (docs/adr/0014-no-run-twice-after-an-outage.md). */
export interface LeaseRenewal {
  /** The lease's term now: claims made under an earlier term are no longer this process's. */
  epoch: number;
  /**
   * `taken`: the first renewal of this process (a new term); `held`: renewed in time; `resumed`:
   * it had lapsed (the store was away) but nobody took its claims, which are still this
   * process's; `lost`: other gateways took its claims over meanwhile, and a new term starts.
   */
  state: 'taken' | 'held' | 'resumed' | 'lost';
}

/**
 * The gateways sharing one job store (a database): each holds a lease it renews while it runs.
 * A replica whose lease lapsed is dead for every other: the runs it claimed are recovered. A store
 * with a clock of its own (PostgreSQL) judges every lease on that clock, whatever `now` the
 * caller passes, so that replicas whose clocks differ agree; and it judges a lapsed lease gone
 * only once some replica has renewed its own without a break for a whole lease since, so that
 * after an outage of the store itself every holder has a lease's time to come back first.
 */
export interface ReplicaLeases {
  /** Takes or renews `replica`'s lease for `leaseMs` (a store without a clock: until `replica.leaseUntil`). */
  renew(replica: Replica, leaseMs: number): Promise<LeaseRenewal>;
  /** Gives the lease up (a gateway stopping cleanly). Never throws. */
  release(claimant: string): Promise<void>;
  /** The replicas whose lease holds at `now`, oldest first. */
  live(now: Date): Promise<Replica[]>;
  /** Of `claimants`, those that held a lease which lapsed before `now` and are judged gone (claimants that never held one are not among them). */
  lapsed(claimants: readonly string[], now: Date): Promise<Set<string>>;
}
