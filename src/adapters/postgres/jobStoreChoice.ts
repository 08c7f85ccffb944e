import type { TickLock } from '../../application/ports/TickLock.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import type { AgentConfig } from '../config/AgentConfig.js';
import { withLibpqPassword } from './libpqPassword.js';
import { databaseLocation, type DatabaseLocation } from './PostgresDatabase.js';

/**
 * The database that holds the jobs: `AGENT_DATABASE_URL` (wins) or `database.url`; null for the
 * files under `$AGENT_HOME`. Throws DatabaseUrlError for a URL that is not postgres://. A URL
 * without a password gets the one `PGPASSWORD` or `PGPASSFILE` gives (libpqPassword.ts).
 */
export function configuredDatabase(config: AgentConfig, env: NodeJS.ProcessEnv): DatabaseLocation | null {
  const fromEnv = env.AGENT_DATABASE_URL?.trim();
  if (fromEnv) return withPassword(databaseLocation(fromEnv, 'AGENT_DATABASE_URL'), env);
  const fromConfig = config.database?.url?.trim();
  if (fromConfig) return withPassword(databaseLocation(fromConfig, 'database.url in config.yaml'), env);
  return null;
}

function withPassword(location: DatabaseLocation, env: NodeJS.ProcessEnv): DatabaseLocation {
  return { ...location, url: withLibpqPassword(location.url, env) };
}

/**
 * The tick lock of a database store: always free. Row locks taken with SKIP LOCKED keep ticks on
 * several processes from claiming one slot, so they need not take turns.
 */
export const NO_TICK_LOCK: TickLock = {
  tryAcquire: async () => ({ release: async () => undefined }),
};

/** A database command with no database configured. */
export class DatabaseNotConfiguredError extends AppError {
  constructor(configFile: string) {
    super(
      ERROR_CODES.DATABASE.NOT_CONFIGURED,
      `No database is configured: set AGENT_DATABASE_URL, or database.url in ${configFile}, to a postgres:// URL such as postgres://agent@db:5432/agent.`,
    );
  }
}
