import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileGatewayRegistry } from '../../src/adapters/persistence/FileGatewayRegistry.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { InMemoryGatewayRegistry } from '../support/fakes/InMemoryGatewayRegistry.js';
import { describeGatewayRegistryContract } from './GatewayRegistry.contract.js';

describeGatewayRegistryContract('InMemoryGatewayRegistry', async () => ({ registry: new InMemoryGatewayRegistry() }));

describeGatewayRegistryContract('FileGatewayRegistry', async () => {
  const home = await mkdtemp(join(tmpdir(), 'agent-registry-contract-'));
  return { registry: new FileGatewayRegistry(agentPathsFor(home)), cleanup: () => rm(home, { recursive: true, force: true }) };
});
