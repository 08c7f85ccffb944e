import { DatabaseUnavailableError, PostgresDatabase, databaseLocation } from '../../../src/adapters/postgres/PostgresDatabase.js';
import { privatePostgres, type PrivatePostgres } from '../../support/privatePostgres.js';

/** The pool under a server that goes away while statements run (a restart, a crash). */
describe('a PostgreSQL pool whose server restarts', () => {
  let server: PrivatePostgres;
  let database: PostgresDatabase;

  beforeAll(async () => {
    server = await privatePostgres();
    database = await PostgresDatabase.open(databaseLocation(server.url, 'TEST_POSTGRES_URL'));
  }, 240_000);

  afterAll(async () => {
    await database?.close();
    await server?.destroy();
  });

  it('fails the transaction and the lock holder under way in one sentence, and the process lives on to use the server again', async () => {
    const failed = (work: Promise<unknown>) =>
      work.then(
        () => null,
        (error: unknown) => error,
      );
    const inTransaction = failed(database.transaction((tx) => tx.query('SELECT pg_sleep(30)')));
    const holdingLock = failed(database.holdingLock(42, (tx) => tx.query('SELECT pg_sleep(30)')));
    // Both are under way on connections of their own before the server goes.
    await new Promise((resolve) => setTimeout(resolve, 300));

    await server.restart();

    for (const error of await Promise.all([inTransaction, holdingLock])) {
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as Error).message).toMatch(/^Cannot use the database 127\.0\.0\.1:\d+\/agent: /);
    }
    // Once the server takes connections again, the same pool serves as before.
    for (
      let tries = 0;
      tries < 100 &&
      !(await database.query('SELECT 1').then(
        () => true,
        () => false,
      ));
      tries += 1
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await database.transaction((tx) => tx.query<{ one: number }>('SELECT 1 AS one'))).toEqual([{ one: 1 }]);
    expect(await database.holdingLock(42, (tx) => tx.query<{ two: number }>('SELECT 2 AS two'))).toEqual([{ two: 2 }]);
  }, 240_000);
});
