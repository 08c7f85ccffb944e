import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSubscriptionRepository } from '../../src/adapters/persistence/FileSubscriptionRepository.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import type { PostgresDatabase } from '../../src/adapters/postgres/PostgresDatabase.js';
import { PostgresSubscriptionRepository } from '../../src/adapters/postgres/PostgresSubscriptionRepository.js';
import { scratchDatabase, type ScratchDatabase } from '../helpers/postgres.js';
import { InMemorySubscriptionRepository } from '../fakes/InMemorySubscriptionRepository.js';
import { describeSubscriptionRepositoryContract } from './WebhookSubscriptionRepository.contract.js';

describeSubscriptionRepositoryContract('InMemorySubscriptionRepository', async () => ({ repo: new InMemorySubscriptionRepository() }));

describeSubscriptionRepositoryContract('FileSubscriptionRepository', async () => {
  const home = await mkdtemp(join(tmpdir(), 'agent-subscriptions-contract-'));
  return {
    repo: new FileSubscriptionRepository(agentPathsFor(home)),
    cleanup: () => rm(home, { recursive: true, force: true }),
  };
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

  describeSubscriptionRepositoryContract('PostgresSubscriptionRepository', async () => {
    await database.query('TRUNCATE agent_webhook_subscriptions');
    return { repo: new PostgresSubscriptionRepository(database) };
  });

  describeSubscriptionRepositoryContract('PostgresSubscriptionRepository, watching', async () => {
    await database.query('TRUNCATE agent_webhook_subscriptions');
    const repo = new PostgresSubscriptionRepository(database);
    const unwatch = repo.watch();
    return { repo, cleanup: async () => unwatch() };
  });
});
