import type { PostgresDatabase, Transaction } from './PostgresDatabase.js';
import { MIGRATIONS, type Migration } from './migrations.js';

/*
 * Applying the schema's migrations (migrations.ts) and telling which are applied.
 */

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
    const applied = new Set(
      (await client.query<{ version: number }>('SELECT version FROM agent_schema_migrations')).map((row) => row.version),
    );
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
export async function migrationStates(
  database: PostgresDatabase,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<MigrationState[]> {
  const exists = await database.query<{ found: string | null }>("SELECT to_regclass('agent_schema_migrations')::text AS found");
  const rows = exists[0]?.found
    ? await database.query<{ version: number; applied_at: Date }>('SELECT version, applied_at FROM agent_schema_migrations')
    : [];
  const appliedAt = new Map(rows.map((row) => [row.version, row.applied_at]));
  return migrations.map((migration) => ({
    version: migration.version,
    name: migration.name,
    appliedAt: appliedAt.get(migration.version) ?? null,
  }));
}
