import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileRunOutputStore } from '../../src/adapters/persistence/FileRunOutputStore.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { InMemoryRunOutputStore } from '../fakes/InMemoryRunOutputStore.js';
import { describeRunOutputStoreContract } from './RunOutputStore.contract.js';

describeRunOutputStoreContract('InMemoryRunOutputStore', async () => ({ store: new InMemoryRunOutputStore() }));

describeRunOutputStoreContract('FileRunOutputStore', async () => {
  const home = await mkdtemp(join(tmpdir(), 'agent-output-contract-'));
  return { store: new FileRunOutputStore(agentPathsFor(home)), cleanup: () => rm(home, { recursive: true, force: true }) };
});
