import 'reflect-metadata';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { buildApplicationContainer } from '../../src/composition/applicationContainer.js';
import { STORES } from '../../src/composition/stores.js';
import { TOKENS } from '../../src/application/ports/tokens.js';
import { FileRunLedger } from '../../src/adapters/persistence/FileRunLedger.js';
import { PostgresWebhookInbox } from '../../src/adapters/postgres/PostgresWebhookInbox.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';

/** Every store port is wired once, from STORES (src/composition/stores.ts). */
describe('the wiring table of the stores', () => {
  const suite = scratchDatabaseForSuite();
  let home: string;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-stores-wiring-'));
    await writeFile(join(home, 'config.yaml'), '');
  });

  afterEach(() => rm(home, { recursive: true, force: true }));

  it('names each port once, and every port has a file adapter or a database one', () => {
    expect(new Set(STORES.map((store) => store.token)).size).toBe(STORES.length);
    for (const store of STORES) expect(store.file !== null || store.database !== null).toBe(true);
  });

  it('binds every port that has a file adapter on the embedded default, each to its file adapter', async () => {
    const { container } = await buildApplicationContainer(agentPathsFor(home), {}, new RecordingLogger());
    for (const store of STORES.filter((each) => each.file !== null)) {
      expect(container.isBound(store.token)).toBe(true);
      expect(container.get(store.token)).toBeInstanceOf(store.file!);
    }
    expect(container.isBound(TOKENS.ReplicaLeases)).toBe(false);
    expect(container.get(TOKENS.RunLedger)).toBeInstanceOf(FileRunLedger);
  });

  it('reads every adapter the database store gives from a row of the table, and binds it with the database', async () => {
    const { container, database } = await buildApplicationContainer(
      agentPathsFor(home),
      { AGENT_DATABASE_URL: suite.url },
      new RecordingLogger(),
    );
    const fromTable = new Set(STORES.filter((store) => store.database !== null).map((store) => store.token));
    for (const adapter of database!.stores) expect(fromTable.has(adapter.token)).toBe(true);
    expect(container.get(TOKENS.WebhookInbox)).toBeInstanceOf(PostgresWebhookInbox);
    expect(container.get(TOKENS.JobRepository)).toBe(database!.repository);
  });
});
