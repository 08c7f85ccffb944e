import type { PostgresDatabase, Transaction } from './PostgresDatabase.js';

/** One versioned change to the schema; applied once, in order, each in its own transaction. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The schema, oldest first. A released migration is never edited: a change is a new one.
 * Jobs are rows whose `record` holds the job as jobs.json holds it; the columns beside it are
 * what the store looks jobs up by (due, running, by name), kept equal to the record by every write.
 * Webhook events are rows holding the event's fields and the sender's JSON text of its payload,
 * with who claimed each; delivery keys are remembered a row each with when they were last stored.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'jobs',
    sql: `
      CREATE TABLE agent_jobs (
        id text PRIMARY KEY,
        seq bigserial NOT NULL,
        name_key text NOT NULL,
        state text NOT NULL,
        enabled boolean NOT NULL,
        next_run_at timestamptz,
        record jsonb NOT NULL
      );
      CREATE INDEX agent_jobs_due ON agent_jobs (next_run_at) WHERE state = 'scheduled' AND enabled;
      CREATE INDEX agent_jobs_running ON agent_jobs (id) WHERE state = 'running';
      CREATE INDEX agent_jobs_name ON agent_jobs (name_key);
    `,
  },
  {
    version: 2,
    name: 'gateway leases',
    sql: `
      CREATE TABLE agent_gateways (
        claimant text PRIMARY KEY,
        host text NOT NULL,
        pid integer NOT NULL,
        started_at timestamptz NOT NULL,
        listener text,
        provider text NOT NULL,
        lease_until timestamptz NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'webhook inbox',
    sql: `
      CREATE TABLE agent_webhook_events (
        id text PRIMARY KEY,
        seq bigserial NOT NULL,
        route text NOT NULL,
        event text NOT NULL,
        delivery_id text NOT NULL,
        payload text NOT NULL,
        received_at timestamptz NOT NULL,
        claimant text,
        claim_session text,
        claimed_at timestamptz
      );
      CREATE INDEX agent_webhook_events_waiting ON agent_webhook_events (seq) WHERE claimant IS NULL;
      CREATE INDEX agent_webhook_events_claimed ON agent_webhook_events (claimant) WHERE claimant IS NOT NULL;
      CREATE TABLE agent_webhook_deliveries (
        key text PRIMARY KEY,
        seen_at timestamptz NOT NULL
      );
      CREATE INDEX agent_webhook_deliveries_seen ON agent_webhook_deliveries (seen_at);
    `,
  },
];

/** The advisory lock every process applying migrations takes, so that only one applies them. */
const MIGRATION_LOCK = 0x61676e74; // "agnt"

export interface MigrationState {
  version: number;
  name: string;
  /** When it was applied, or null while it is pending. */
  appliedAt: Date | null;
}

async function ensureLedger(client: Transaction): Promise<void> {
  await client.query(`
    CREATE TABLE IF NOT EXISTS agent_schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
}

/**
 * Applies the migrations not applied yet, under an advisory lock (gateways starting together
 * wait for each other; the second finds nothing to do). Returns those it applied.
 */
export function migrate(database: PostgresDatabase, migrations: readonly Migration[] = MIGRATIONS): Promise<Migration[]> {
  return database.holdingLock(MIGRATION_LOCK, async (client) => {
    await ensureLedger(client);
    const applied = new Set((await client.query<{ version: number }>('SELECT version FROM agent_schema_migrations')).map((row) => row.version));
    const done: Migration[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO agent_schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      done.push(migration);
    }
    return done;
  });
}

/** Every migration this version knows, with when it was applied (null: pending). */
export async function migrationStates(database: PostgresDatabase, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationState[]> {
  const exists = await database.query<{ found: string | null }>("SELECT to_regclass('agent_schema_migrations')::text AS found");
  const rows = exists[0]?.found
    ? await database.query<{ version: number; applied_at: Date }>('SELECT version, applied_at FROM agent_schema_migrations')
    : [];
  const appliedAt = new Map(rows.map((row) => [row.version, row.applied_at]));
  return migrations.map((migration) => ({ version: migration.version, name: migration.name, appliedAt: appliedAt.get(migration.version) ?? null }));
}
