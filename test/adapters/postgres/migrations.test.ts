import { PostgresDatabase, databaseLocation } from '../../../src/adapters/postgres/PostgresDatabase.js';
import { MIGRATIONS } from '../../../src/adapters/postgres/migrations.js';
import { migrate, migrationStates } from '../../../src/adapters/postgres/schemaMigrations.js';
import { scratchDatabase, type ScratchDatabase } from '../../support/postgres.js';

describe('schema migrations on PostgreSQL', () => {
  let scratch: ScratchDatabase;
  const opened: PostgresDatabase[] = [];
  const open = async () => {
    const database = await PostgresDatabase.open(databaseLocation(scratch.url, 'the test URL'));
    opened.push(database);
    return database;
  };

  beforeEach(async () => {
    scratch = await scratchDatabase();
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((database) => database.close()));
    await scratch.drop();
  });

  it('says every migration is pending on an empty database, and applied once migrate ran', async () => {
    const database = await open();
    expect((await migrationStates(database)).every((state) => state.appliedAt === null)).toBe(true);

    expect((await migrate(database)).map((migration) => migration.version)).toEqual(MIGRATIONS.map((migration) => migration.version));

    const states = await migrationStates(database);
    expect(states.map((state) => state.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
    expect(states.every((state) => state.appliedAt instanceof Date)).toBe(true);
  });

  it('applies each migration once when several processes migrate at the same moment', async () => {
    const clients = await Promise.all([open(), open(), open(), open()]);

    const applied = await Promise.all(clients.map((database) => migrate(database)));

    expect(
      applied
        .flat()
        .map((migration) => migration.version)
        .sort(),
    ).toEqual(MIGRATIONS.map((migration) => migration.version).sort());
    expect(await migrate(clients[0]!)).toEqual([]);
  });

  it('leaves nothing behind of a migration that fails, and applies the ones before it', async () => {
    const database = await open();
    const broken = [...MIGRATIONS, { version: 999, name: 'broken', sql: 'CREATE TABLE agent_half (x int); SELECT no_such_function();' }];

    await expect(migrate(database, broken)).rejects.toThrow(/Cannot use the database .*agent_test_/);

    const states = await migrationStates(database, broken);
    expect(states.find((state) => state.version === 999)!.appliedAt).toBeNull();
    expect(states.find((state) => state.version === 1)!.appliedAt).not.toBeNull();
    expect(await database.query("SELECT to_regclass('agent_half') AS found")).toEqual([{ found: null }]);
  });

  it('names the database, never the password, when it cannot be reached', async () => {
    const database = await PostgresDatabase.open(databaseLocation('postgres://agent:s3cret-pw@127.0.0.1:1/jobs', 'AGENT_DATABASE_URL'));
    opened.push(database);

    const failure = await migrate(database).catch((error: Error) => error);

    expect(String(failure)).toContain('Cannot use the database 127.0.0.1:1/jobs: nothing listens there');
    expect(String(failure)).not.toContain('s3cret-pw');
  });

  it('refuses a URL that is not postgres:// in one sentence', () => {
    expect(() => databaseLocation('mysql://x@h/db', 'database.url')).toThrow(
      'database.url must be a postgres:// URL, not mysql://…; write it as postgres://user@host:5432/database.',
    );
    expect(() => databaseLocation('not a url', 'AGENT_DATABASE_URL')).toThrow(
      'AGENT_DATABASE_URL is not a URL; write it as postgres://user@host:5432/database.',
    );
  });
});
