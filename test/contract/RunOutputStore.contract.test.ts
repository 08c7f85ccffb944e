import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileRunOutputStore } from '../../src/adapters/persistence/FileRunOutputStore.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { PostgresRunOutputStore } from '../../src/adapters/postgres/PostgresRunOutputStore.js';
import { InMemoryRunOutputStore } from '../support/fakes/InMemoryRunOutputStore.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';
import { describeRunOutputStoreContract } from './RunOutputStore.contract.js';

describeRunOutputStoreContract('InMemoryRunOutputStore', async () => ({ store: new InMemoryRunOutputStore() }));

describeRunOutputStoreContract('FileRunOutputStore', async () => {
  const home = await mkdtemp(join(tmpdir(), 'agent-output-contract-'));
  return { store: new FileRunOutputStore(agentPathsFor(home)), cleanup: () => rm(home, { recursive: true, force: true }) };
});

describe('on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();

  describeRunOutputStoreContract('PostgresRunOutputStore', async () => {
    await suite.database.query('TRUNCATE agent_run_reports');
    return { store: new PostgresRunOutputStore(suite.database) };
  });
});
