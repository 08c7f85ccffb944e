import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSubscriptionRepository } from '../../src/adapters/persistence/FileSubscriptionRepository.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
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
