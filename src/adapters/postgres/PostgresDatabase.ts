import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import { commonJsExports } from '../shared/commonJsModule.js';

/** A database URL this service accepts, and how it is named to people: never with its password. */
export interface DatabaseLocation {
  url: string;
  /** `host:port/database`, for messages and logs. */
  label: string;
}

/** The URL is not a PostgreSQL URL: a configuration mistake. */
export class DatabaseUrlError extends AppError {
  constructor(message: string) {
    super(ERROR_CODES.DATABASE.BAD_URL, message);
  }
}

/** The database cannot be reached or refused the statement for a reason of the moment. */
export class DatabaseUnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ERROR_CODES.DATABASE.UNAVAILABLE, message, options);
  }
}

/**
 * Reads a `postgres://` (or `postgresql://`) URL; `where` names the setting it came from.
 * Throws DatabaseUrlError, in one sentence, for anything else.
 */
export function databaseLocation(url: string, where: string): DatabaseLocation {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new DatabaseUrlError(`${where} is not a URL; write it as postgres://user@host:5432/database.`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new DatabaseUrlError(
      `${where} must be a postgres:// URL, not ${parsed.protocol}//…; write it as postgres://user@host:5432/database.`,
    );
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || decodeURIComponent(parsed.username) || 'postgres';
  const host = parsed.hostname || parsed.searchParams.get('host') || 'localhost';
  return { url: url.trim(), label: `${host}:${parsed.port || '5432'}/${database}` };
}

/** Why a connection or a statement failed, in words, without the URL (it may hold a password). */
export function databaseProblem(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ECONNREFUSED') return 'nothing listens there';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
  if (code === 'ETIMEDOUT') return 'the connection timed out';
  if (code === '3D000') return 'that database does not exist';
  if (code === '42P01') return 'its schema is not set up (run `agent db migrate`, or start `agent gateway`, which does)';
  if (code === '28P01' || code === '28000') return 'the server refused the login';
  if (code === '57P01' || code === '57P03') return 'the server is shutting down or starting';
  return message.replace(/postgres(ql)?:\/\/\S*/g, '<database URL>');
}

/** How long a connection attempt may take before the database counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;
/** How soon a broken LISTEN connection is opened again. */
const RELISTEN_MS = 1_000;
/** Connections a process keeps at most. */
const POOL_SIZE = 10;

/**
 * A pool of connections to one PostgreSQL database (node-postgres, loaded when first needed so
 * that commands on the file store never load it). Every failure to reach the database or to run a
 * statement becomes a DatabaseUnavailableError naming the database (host, port, name; never the
 * password).
 */
export class PostgresDatabase {
  private constructor(
    readonly location: DatabaseLocation,
    private readonly pool: Pool,
  ) {}

  static async open(location: DatabaseLocation): Promise<PostgresDatabase> {
    const pg = commonJsExports(await import('pg'));
    const pool = new pg.Pool({
      connectionString: location.url,
      max: POOL_SIZE,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      // Times as instants: `timestamptz` columns are read back as Date.
      application_name: 'agent',
      // A command ends when its work does, whatever connections stay idle in the pool.
      allowExitOnIdle: true,
    });
    // An idle connection the server dropped is discarded; the next query reconnects.
    pool.on('error', () => undefined);
    return new PostgresDatabase(location, pool);
  }

  /**
   * One statement on any free connection. A `PreparedStatement` is parsed and planned once per
   * connection and run by name after that: for the statements of the hot paths (a webhook's
   * accept, the rate limit).
   */
  async query<Row extends QueryResultRow>(statement: string | PreparedStatement, values: readonly unknown[] = []): Promise<Row[]> {
    try {
      const text = typeof statement === 'string' ? statement : statement.text;
      const name = typeof statement === 'string' ? undefined : statement.name;
      return (await this.pool.query<Row>({ text, name, values: values as unknown[] })).rows;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * Runs `work` in one transaction on one connection: committed when it resolves, rolled back
   * when it throws (its error is passed on unchanged) or when it resolves after calling
   * `keepNothing()` (nothing it did need be kept, so it waits for no write to disk).
   */
  async transaction<T>(work: (client: Transaction) => Promise<T>): Promise<T> {
    const client = await this.checkOut();
    let broken = false;
    const tx = new Transaction(client, (error) => this.failure(error));
    try {
      await tx.query('BEGIN');
      const result = await work(tx);
      await tx.query(tx.keeps ? 'COMMIT' : 'ROLLBACK');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      checkIn(client, broken);
    }
  }

  /**
   * Runs `work` on one connection of its own while holding the session-level advisory lock
   * `key`, waiting for it: what migrations hold so that only one process applies them.
   */
  async holdingLock<T>(key: number, work: (client: Transaction) => Promise<T>): Promise<T> {
    const client = await this.checkOut();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [key]);
    } catch (error) {
      checkIn(client, true);
      throw this.failure(error);
    }
    try {
      return await work(new Transaction(client, (error) => this.failure(error)));
    } finally {
      const unlocked = await client.query('SELECT pg_advisory_unlock($1)', [key]).then(
        () => true,
        () => false,
      );
      checkIn(client, !unlocked);
    }
  }

  /**
   * Takes the session-level advisory lock `key` without waiting, on a connection kept for it
   * alone while it is held: null when another session holds it. The server frees it when the
   * connection ends, so a holder that dies loses it at once; `onLost` is called when the
   * connection breaks (a server restart), and `release` gives it up.
   */
  async tryHoldingLock(key: number, onLost: () => void): Promise<{ release(): Promise<void> } | null> {
    const client = await this.checkOut();
    let taken: boolean;
    try {
      const result = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1) AS taken', [key]);
      taken = result.rows[0]?.taken === true;
    } catch (error) {
      checkIn(client, true);
      throw this.failure(error);
    }
    if (!taken) {
      checkIn(client, false);
      return null;
    }
    let held = true;
    const lost = () => {
      if (!held) return;
      held = false;
      checkIn(client, true);
      onLost();
    };
    client.on('error', lost);
    client.on('end', lost);
    return {
      release: async () => {
        if (!held) return;
        held = false;
        client.off('error', lost);
        client.off('end', lost);
        // Unlocked before this resolves: ending the session frees the lock too, but only once the
        // server has seen the connection close, after which another gateway asking at once would
        // still find it taken. The connection is closed all the same (it may be half-broken).
        await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
        checkIn(client, true);
        client.on('error', ignoreCutConnection);
      },
    };
  }

  /**
   * A connection of the pool for this process alone until `checkIn`. node-postgres reports a
   * connection the server cut (a restart) as an 'error' event on a client that is out of the pool,
   * which would end the process without a listener: the statement under way fails anyway, with
   * the same error, so the event itself is ignored.
   */
  private async checkOut(): Promise<PoolClient> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.failure(error);
    }
    client.on('error', ignoreCutConnection);
    return client;
  }

  /**
   * Calls `onNotice` for every notification on `channel` (LISTEN), on a connection of its own
   * that is opened again after it breaks (every `RELISTEN_MS` until it succeeds); `onNotice` is
   * also called after each reconnection, since notices sent meanwhile are lost. Returns the
   * function that stops listening.
   */
  listen(channel: string, onNotice: () => void): () => void {
    let stopped = false;
    let client: PoolClient | null = null;
    let retry: NodeJS.Timeout | null = null;
    const connect = async (): Promise<void> => {
      try {
        const connection = await this.pool.connect();
        if (stopped) {
          connection.release();
          return;
        }
        client = connection;
        const lost = () => {
          if (client !== connection) return;
          client = null;
          connection.release(true);
          if (!stopped) retry = setTimeout(() => void connect(), RELISTEN_MS);
        };
        connection.on('notification', (message) => {
          if (message.channel === channel) onNotice();
        });
        connection.on('error', lost);
        connection.on('end', lost);
        await connection.query(`LISTEN ${channel}`);
        onNotice();
      } catch {
        if (!stopped) retry = setTimeout(() => void connect(), RELISTEN_MS);
      }
    };
    void connect();
    return () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      const connection = client;
      client = null;
      connection?.release(true);
    };
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }

  private failure(error: unknown): DatabaseUnavailableError {
    if (error instanceof DatabaseUnavailableError) return error;
    return new DatabaseUnavailableError(
      `Cannot use the database ${this.location.label}: ${databaseProblem(error)}; check that PostgreSQL runs there and that AGENT_DATABASE_URL (or database.url) names it.`,
      { cause: error },
    );
  }
}

/** What `checkOut` listens to a checked-out connection's 'error' events with. */
function ignoreCutConnection(): void {}

/** Gives a connection of `checkOut` back to the pool; a `broken` one is closed. */
function checkIn(client: PoolClient, broken: boolean): void {
  client.off('error', ignoreCutConnection);
  client.release(broken);
}

/** A statement prepared once per connection under `name` (unique in the process), then run by name. */
export interface PreparedStatement {
  name: string;
  text: string;
}

/** Statements on the one connection of a transaction (or of a held lock). */
export class Transaction {
  private kept = true;

  constructor(
    private readonly client: PoolClient,
    private readonly failure: (error: unknown) => Error,
  ) {}

  async query<Row extends QueryResultRow>(text: string, values: readonly unknown[] = []): Promise<Row[]> {
    try {
      return (await this.client.query<Row>(text, values as unknown[])).rows;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * Says that the transaction changed nothing worth keeping (it only read, or locked rows it then
   * left as they were): it ends with a rollback instead of a commit. A commit of a transaction
   * that locked rows waits for the server to write its record to disk; a rollback does not.
   */
  keepNothing(): void {
    this.kept = false;
  }

  /** Whether the transaction ends with a commit (see keepNothing). */
  get keeps(): boolean {
    return this.kept;
  }
}
