import { performance } from 'node:perf_hooks';
import type { LeaseRenewal, Replica, ReplicaLeases } from '../../application/ports/ReplicaLeases.js';
import { chatReceiverStatusesFrom } from '../../domain/chat/chatReceivers.js';
import { toIsoUtc } from '../../domain/zonedTime.js';
import { jsonbText } from './jsonbText.js';
import type { PostgresDatabase } from './PostgresDatabase.js';

interface LeaseRow {
  claimant: string;
  host: string;
  pid: number;
  started_at: Date;
  listener: string | null;
  provider: string;
  lease_until: Date;
  chat_receivers: unknown;
}

/**
 * Whether the lease of the `agent_gateways` row aliased `lease` is gone, on the database's clock:
 * it lapsed (`lease_until` is past `now()`), and some lease that holds has been renewed without a
 * break for at least that lease's length (`lease_ms`) since. The second half is what keeps an
 * outage of the database itself from making every replica look dead the moment it is back: then
 * every replica's renewals broke off, none is a witness, and each has a whole lease to renew its
 * own and record what it finished before another may judge it gone. A replica cut off alone (a
 * network split) is judged gone once its lease lapsed, the others being witnesses all along.
 */
export function leaseGone(lease: string): string {
  return `(${lease}.lease_until < now() AND EXISTS (
    SELECT 1 FROM agent_gateways witness
    WHERE witness.lease_until >= now() AND witness.connected_since <= now() - ${lease}.lease_ms * interval '1 millisecond'
  ))`;
}

/** The term of the lease this process holds: what its claims carry, and what fences them. */
export interface LeaseTerm {
  claimant: string;
  epoch: number;
}

/** What the stores that claim (the webhook inbox, the jobs) ask of this process's lease. */
export interface LeaseFence {
  /** The term of the lease this process holds, or null when it holds none (a command): its claims are then not fenced. */
  term(): LeaseTerm | null;
  /**
   * Whether this process may start runs now: false from a renewal that failed, or one that is
   * late (two thirds of the lease after the last one that worked), until one works again.
   */
  holds(): boolean;
}

/**
 * Takes or renews a lease for $7 ms on the database's clock. $9 is the term this process holds
 * (null at its first renewal): the term moves on when it is not the row's (a first renewal, or
 * another gateway took its claims over meanwhile). `connected_since` moves to now() when the term
 * moves on, when the lease had lapsed, or when $10 says a renewal of this process failed since
 * the last that worked. The row's term and lapse before the statement come back with it.
 */
const RENEW = `
  WITH prior AS (SELECT epoch, lease_until < now() AS lapsed FROM agent_gateways WHERE claimant = $1)
  INSERT INTO agent_gateways AS held (claimant, host, pid, started_at, listener, provider, lease_until, chat_receivers, epoch, lease_ms, connected_since)
  VALUES ($1, $2, $3, $4, $5, $6, now() + $7 * interval '1 millisecond', $8::jsonb, coalesce($9::bigint, 0) + 1, $7, now())
  ON CONFLICT (claimant) DO UPDATE SET
    listener = EXCLUDED.listener, provider = EXCLUDED.provider, chat_receivers = EXCLUDED.chat_receivers,
    lease_until = EXCLUDED.lease_until, lease_ms = EXCLUDED.lease_ms,
    epoch = CASE WHEN held.epoch = $9::bigint THEN held.epoch ELSE held.epoch + 1 END,
    connected_since = CASE WHEN held.epoch = $9::bigint AND held.lease_until >= now() AND NOT $10::boolean THEN held.connected_since ELSE now() END
  RETURNING held.epoch::text AS epoch, (SELECT lapsed FROM prior) AS lapsed`;

/**
 * The replicas' leases, one row each in `agent_gateways` (docs/scaling.md), judged on the
 * database's clock (`now()`): the `now` callers pass is not used. One instance per process: it
 * keeps the term of the lease this process holds, for the stores that fence their claims with it.
 */
export class PostgresReplicaLeases implements ReplicaLeases, LeaseFence {
  private held: LeaseTerm | null = null;
  private leaseMs = 0;
  /** When (performance.now) the last renewal that worked was sent. */
  private renewedAt = Number.NEGATIVE_INFINITY;
  /** Whether a renewal failed since the last one that worked. */
  private failing = false;

  constructor(private readonly database: PostgresDatabase) {}

  term(): LeaseTerm | null {
    return this.held;
  }

  holds(): boolean {
    return this.held !== null && !this.failing && performance.now() - this.renewedAt < (this.leaseMs * 2) / 3;
  }

  async renew(replica: Replica, leaseMs: number): Promise<LeaseRenewal> {
    const sentAt = performance.now();
    const mine = this.held?.claimant === replica.claimant ? this.held : null;
    let row: { epoch: string; lapsed: boolean | null } | undefined;
    try {
      [row] = await this.database.query<{ epoch: string; lapsed: boolean | null }>(RENEW, [
        replica.claimant,
        replica.host,
        replica.pid,
        replica.startedAt,
        replica.listener,
        replica.provider,
        leaseMs,
        jsonbText(replica.chatReceivers ?? []),
        mine?.epoch ?? null,
        this.failing,
      ]);
    } catch (error) {
      if (mine) this.failing = true;
      throw error;
    }
    const epoch = Number(row!.epoch);
    const state: LeaseRenewal['state'] =
      mine === null ? 'taken' : epoch !== mine.epoch ? 'lost' : row!.lapsed === true ? 'resumed' : 'held';
    this.held = { claimant: replica.claimant, epoch };
    this.leaseMs = leaseMs;
    this.renewedAt = sentAt;
    this.failing = false;
    return { epoch, state };
  }

  async release(claimant: string): Promise<void> {
    if (this.held?.claimant === claimant) this.held = null;
    await this.database.query('DELETE FROM agent_gateways WHERE claimant = $1', [claimant]).catch(() => undefined);
  }

  async live(_now: Date): Promise<Replica[]> {
    const rows = await this.database.query<LeaseRow>(
      'SELECT * FROM agent_gateways WHERE lease_until >= now() ORDER BY started_at, claimant',
    );
    return rows.map((row) => {
      const chatReceivers = chatReceiverStatusesFrom(row.chat_receivers);
      return {
        claimant: row.claimant,
        host: row.host,
        pid: row.pid,
        startedAt: toIsoUtc(row.started_at),
        listener: row.listener,
        provider: row.provider,
        leaseUntil: row.lease_until,
        ...(chatReceivers.length > 0 ? { chatReceivers } : {}),
      };
    });
  }

  async lapsed(claimants: readonly string[], _now: Date): Promise<Set<string>> {
    if (claimants.length === 0) return new Set();
    const rows = await this.database.query<{ claimant: string }>(
      `SELECT claimant FROM agent_gateways g WHERE claimant = ANY($1) AND ${leaseGone('g')}`,
      [[...claimants]],
    );
    return new Set(rows.map((row) => row.claimant));
  }
}
