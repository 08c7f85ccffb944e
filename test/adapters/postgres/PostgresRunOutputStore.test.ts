import { PostgresRunOutputStore } from '../../../src/adapters/postgres/PostgresRunOutputStore.js';
import { scratchDatabaseForSuite } from '../../support/postgres.js';

const JOB = 'a1b2c3d4e5f6';

describe('run reports on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();
  let store: PostgresRunOutputStore;

  beforeEach(async () => {
    await suite.database.query('TRUNCATE agent_run_reports');
    store = new PostgresRunOutputStore(suite.database);
  });

  it('names a report by job, file and database (host:port/name, never the password)', async () => {
    const location = await store.save(JOB, '2026-03-01_12-00-00.md', 'x', 5);

    expect(location).toBe(`report ${JOB}/2026-03-01_12-00-00.md in ${suite.database.location.label}`);
    expect(location).toMatch(/ in [^/\s]+:\d+\/agent_test_\w+$/);
    expect((await store.read(JOB, '2026-03-01_12-00-00.md'))?.location).toBe(location);
  });

  it('keeps both reports of runs started within one second, the later sorting after the earlier', async () => {
    await store.save(JOB, '2026-03-01_12-00-00.md', 'first', 5);
    const second = await store.save(JOB, '2026-03-01_12-00-00.md', 'second', 5);

    expect(second).toContain(`${JOB}/2026-03-01_12-00-00_2.md`);
    expect(await store.list(JOB)).toEqual(['2026-03-01_12-00-00_2.md', '2026-03-01_12-00-00.md']);
    expect((await store.read(JOB, '2026-03-01_12-00-00.md'))?.content).toBe('first');
  });

  it('keeps the report just written even when its name sorts before the others (a clock set back)', async () => {
    await store.save(JOB, '2026-03-01_12-05-00.md', 'later', 1);
    await store.save(JOB, '2026-03-01_12-00-00.md', 'set back', 1);

    expect(await store.list(JOB)).toEqual(['2026-03-01_12-00-00.md']);
  });
});
