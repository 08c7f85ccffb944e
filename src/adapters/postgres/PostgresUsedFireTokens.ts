import type { UsedFireTokens } from '../../application/ports/UsedFireTokens.js';
import type { PostgresDatabase, PreparedStatement } from './PostgresDatabase.js';

/**
 * A new id is inserted; one remembered only until `now` or earlier is taken over; one still
 * remembered is left as it is and returns no row. Two replicas inserting one id at once: the
 * second waits for the first's row and then finds it still remembered.
 */
const REMEMBER: PreparedStatement = {
  name: 'agent_used_fire_tokens_remember',
  text: `INSERT INTO agent_used_fire_tokens AS used (id, until) VALUES ($1, $2)
         ON CONFLICT (id) DO UPDATE SET until = EXCLUDED.until WHERE used.until <= $3
         RETURNING 1 AS remembered`,
};

/**
 * The used fire tokens in `agent_used_fire_tokens` (the migration 'used fire tokens'), shared by
 * every gateway on the database: one statement per intent, each committed (and so on the
 * server's disk) before it resolves. Throws DatabaseUnavailableError when the database cannot
 * be used.
 */
export class PostgresUsedFireTokens implements UsedFireTokens {
  constructor(private readonly database: PostgresDatabase) {}

  async remember(id: string, until: Date, now: Date): Promise<boolean> {
    return (await this.database.query(REMEMBER, [id, until, now])).length === 1;
  }

  async forget(id: string): Promise<void> {
    await this.database.query('DELETE FROM agent_used_fire_tokens WHERE id = $1', [id]);
  }

  async forgetExpired(before: Date): Promise<void> {
    await this.database.query('DELETE FROM agent_used_fire_tokens WHERE until <= $1', [before]);
  }
}
