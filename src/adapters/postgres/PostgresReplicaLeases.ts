import type { Replica, ReplicaLeases } from '../../application/ports/ReplicaLeases.js';
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

/** The replicas' leases, one row each in `agent_gateways` (docs/scaling.md). */
export class PostgresReplicaLeases implements ReplicaLeases {
  constructor(private readonly database: PostgresDatabase) {}

  async renew(replica: Replica): Promise<void> {
    await this.database.query(
      `INSERT INTO agent_gateways (claimant, host, pid, started_at, listener, provider, lease_until, chat_receivers)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
       ON CONFLICT (claimant) DO UPDATE SET listener = EXCLUDED.listener, provider = EXCLUDED.provider, lease_until = EXCLUDED.lease_until,
         chat_receivers = EXCLUDED.chat_receivers`,
      [replica.claimant, replica.host, replica.pid, replica.startedAt, replica.listener, replica.provider, replica.leaseUntil, jsonbText(replica.chatReceivers ?? [])],
    );
  }

  async release(claimant: string): Promise<void> {
    await this.database.query('DELETE FROM agent_gateways WHERE claimant = $1', [claimant]).catch(() => undefined);
  }

  async live(now: Date): Promise<Replica[]> {
    const rows = await this.database.query<LeaseRow>('SELECT * FROM agent_gateways WHERE lease_until >= $1 ORDER BY started_at, claimant', [now]);
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

  async lapsed(claimants: readonly string[], now: Date): Promise<Set<string>> {
    if (claimants.length === 0) return new Set();
    const rows = await this.database.query<{ claimant: string }>('SELECT claimant FROM agent_gateways WHERE claimant = ANY($1) AND lease_until < $2', [
      [...claimants],
      now,
    ]);
    return new Set(rows.map((row) => row.claimant));
  }
}
