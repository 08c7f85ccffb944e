import { RECEIVER_LOCK } from '../../src/adapters/postgres/PostgresChatReceiverLease.js';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { PostgresDatabase, databaseLocation } from '../../src/adapters/postgres/PostgresDatabase.js';
import { migrate } from '../../src/adapters/postgres/schemaMigrations.js';

/**
 * The PostgreSQL server of this machine (`.ci/run` starts it). A test that needs it fails, never
 * skips, when it cannot reach it. TEST_POSTGRES_URL points elsewhere (a URL without a database).
 */
const SERVER = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';

async function asAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: `${SERVER}/postgres` });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A database of its own for one test file: its URL, and `drop` to remove it at the end. */
export interface ScratchDatabase {
  url: string;
  /** Opens a pool on it with the schema migrated. */
  open(): Promise<PostgresDatabase>;
  drop(): Promise<void>;
}

export async function scratchDatabase(): Promise<ScratchDatabase> {
  const name = `agent_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await asAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = `${SERVER}/${name}`;
  return {
    url,
    async open() {
      const database = await PostgresDatabase.open(databaseLocation(url, 'TEST_POSTGRES_URL'));
      await migrate(database);
      return database;
    },
    drop: () => asAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/**
 * A scratch database for the enclosing `describe`: made and migrated before its tests, dropped
 * after them. `database` is its pool, once the tests run.
 */
export function scratchDatabaseForSuite(): { readonly database: PostgresDatabase; readonly url: string } {
  let scratch: ScratchDatabase | undefined;
  let database: PostgresDatabase | undefined;
  beforeAll(async () => {
    scratch = await scratchDatabase();
    database = await scratch.open();
  });
  afterAll(async () => {
    await database?.close();
    await scratch?.drop();
  });
  return {
    get database() {
      if (!database) throw new Error('the scratch database is made before the tests of its describe run, not while they are declared');
      return database;
    },
    get url() {
      if (!scratch) throw new Error('the scratch database is made before the tests of its describe run, not while they are declared');
      return scratch.url;
    },
  };
}

/** Ends, from `database`, the session holding the chat receiving role, as a server restart or a cut network would. */
export async function cutChatReceiverSession(database: PostgresDatabase): Promise<void> {
  await database.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = ${RECEIVER_LOCK} AND granted AND pid <> pg_backend_pid()`,
  );
}
