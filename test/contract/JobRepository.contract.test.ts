import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileJobRepository } from '../../src/adapters/persistence/FileJobRepository.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { PostgresJobRepository } from '../../src/adapters/postgres/PostgresJobRepository.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';
import { InMemoryJobRepository } from '../support/fakes/InMemoryJobRepository.js';
import { describeJobRepositoryContract } from './JobRepository.contract.js';

describeJobRepositoryContract('InMemoryJobRepository', async () => ({ repo: new InMemoryJobRepository() }));

describeJobRepositoryContract('FileJobRepository', async () => {
  const home = await mkdtemp(join(tmpdir(), 'agent-jobs-contract-'));
  return {
    repo: new FileJobRepository(agentPathsFor(home)),
    cleanup: () => rm(home, { recursive: true, force: true }),
  };
});

describe('on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();

  describeJobRepositoryContract('PostgresJobRepository', async () => {
    await suite.database.query('TRUNCATE agent_jobs');
    return { repo: new PostgresJobRepository(suite.database) };
  });
});
