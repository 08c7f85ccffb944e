import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSubscriptionRepository } from '../../src/adapters/persistence/FileSubscriptionRepository.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { PostgresSubscriptionRepository } from '../../src/adapters/postgres/PostgresSubscriptionRepository.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';
import { InMemorySubscriptionRepository } from '../support/fakes/InMemorySubscriptionRepository.js';
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
  const suite = scratchDatabaseForSuite();

  describeSubscriptionRepositoryContract('PostgresSubscriptionRepository', async () => {
    await suite.database.query('TRUNCATE agent_webhook_subscriptions');
    return { repo: new PostgresSubscriptionRepository(suite.database) };
  });

  describeSubscriptionRepositoryContract('PostgresSubscriptionRepository, watching', async () => {
    await suite.database.query('TRUNCATE agent_webhook_subscriptions');
    const repo = new PostgresSubscriptionRepository(suite.database);
    const unwatch = repo.watch();
    return { repo, cleanup: async () => unwatch() };
  });
});
