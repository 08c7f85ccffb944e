import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileRunOutputStore } from '../../src/adapters/persistence/FileRunOutputStore.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import type { PostgresDatabase } from '../../src/adapters/postgres/PostgresDatabase.js';
import { PostgresRunOutputStore } from '../../src/adapters/postgres/PostgresRunOutputStore.js';
import { InMemoryRunOutputStore } from '../fakes/InMemoryRunOutputStore.js';
import { scratchDatabase, type ScratchDatabase } from '../helpers/postgres.js';
import { describeRunOutputStoreContract } from './RunOutputStore.contract.js';

describeRunOutputStoreContract('InMemoryRunOutputStore', async () => ({ store: new InMemoryRunOutputStore() }));

describeRunOutputStoreContract('FileRunOutputStore', async () => {
  const home = await mkdtemp(join(tmpdir(), 'agent-output-contract-'));
  return { store: new FileRunOutputStore(agentPathsFor(home)), cleanup: () => rm(home, { recursive: true, force: true }) };
});

describe('on PostgreSQL', () => {
  let scratch: ScratchDatabase;
  let database: PostgresDatabase;

  beforeAll(async () => {
    scratch = await scratchDatabase();
    database = await scratch.open();
  });

  afterAll(async () => {
    await database?.close();
    await scratch?.drop();
  });

  describeRunOutputStoreContract('PostgresRunOutputStore', async () => {
    await database.query('TRUNCATE agent_run_reports');
    return { store: new PostgresRunOutputStore(database) };
  });
});
