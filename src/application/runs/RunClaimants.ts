import { inject, injectable, optional } from 'inversify';
import { livenessAskedOnce, type ClaimantLiveness } from '../../domain/runs/abandonment.js';
import type { ProcessIdentity } from '../ports/ProcessIdentity.js';
import type { ReplicaLeases } from '../ports/ReplicaLeases.js';
import { TOKENS } from '../ports/tokens.js';

/** What one look found out about the claimants of the runs it looked at. */
export interface ClaimantLook {
  /** Whether each claimant lives, asked of the process table once per claimant in this look. */
  alive: ClaimantLiveness;
  /** The claimants this host cannot check whose gateway's lease lapsed: their runs died with them. */
  lapsed: ReadonlySet<string>;
}

/**
 * Whether the processes that claimed runs are gone (docs/runs.md): a claimant on this host is
 * asked of the process table, one on another host of the replica leases, where gateways share a
 * store. The tick's claim and the settling of the ledger's abandoned runs ask both the same way,
 * so that a job and its run record are judged alike.
 */
@injectable()
export class RunClaimants {
  constructor(
    @inject(TOKENS.ProcessIdentity) private readonly identity: ProcessIdentity,
    /** Bound only where gateways share a store (a database); without it no claimant's lease lapses. */
    @inject(TOKENS.ReplicaLeases) @optional() private readonly leases: ReplicaLeases | undefined = undefined,
  ) {}

  /** This process, as the claims it makes name it (`<host>:<pid>`). */
  self(): string {
    return this.identity.claimant();
  }

  /** Whether `claimant` lives: true or false on this host, 'unknown' for another host. */
  isAlive(claimant: string): boolean | 'unknown' {
    return this.identity.isAlive(claimant);
  }

  /** A liveness for one look: each claimant asked of the process table once. */
  liveness(): ClaimantLiveness {
    return livenessAskedOnce((by) => this.identity.isAlive(by));
  }

  /**
   * Looks at `claimants` (absent ones ignored) as of `now`: a fresh liveness, and which of those
   * this host cannot check held a lease that lapsed. The leases are asked only when some
   * claimant is unknown here.
   */
  async look(claimants: Iterable<string | null | undefined>, now: Date): Promise<ClaimantLook> {
    const alive = this.liveness();
    if (!this.leases) return { alive, lapsed: new Set() };
    const named = new Set([...claimants].filter((by): by is string => typeof by === 'string'));
    const unknown = [...named].filter((by) => alive(by) === 'unknown');
    return { alive, lapsed: unknown.length === 0 ? new Set() : await this.leases.lapsed(unknown, now) };
  }
}
