import 'reflect-metadata';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileRunLedger } from '../../src/adapters/persistence/FileRunLedger.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { PostgresRunLedger } from '../../src/adapters/postgres/PostgresRunLedger.js';
import { TOKENS } from '../../src/application/ports/tokens.js';
import { buildApplicationContainer } from '../../src/composition/applicationContainer.js';
import { aRun } from '../contract/RunLedger.contract.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';

describe('run ledger wiring', () => {
  const suite = scratchDatabaseForSuite();
  let home: string;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-run-ledger-wiring-'));
    await writeFile(join(home, 'config.yaml'), 'runs:\n  retention_count: 1\n');
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('keeps the runs in files without a database', async () => {
    const { container } = await buildApplicationContainer(agentPathsFor(home), {}, new RecordingLogger());

    expect(container.get(TOKENS.RunLedger)).toBeInstanceOf(FileRunLedger);
  });

  it("keeps the runs in the configured database, with config.yaml's retention", async () => {
    const { container } = await buildApplicationContainer(agentPathsFor(home), { AGENT_DATABASE_URL: suite.url }, new RecordingLogger());
    const ledger = container.get(TOKENS.RunLedger);
    const startedAt = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();

    await ledger.save(aRun(1, { started_at: startedAt(2) }));
    await ledger.save(aRun(2, { started_at: startedAt(1) }));

    expect(ledger).toBeInstanceOf(PostgresRunLedger);
    expect((await ledger.list({ limit: 10 })).map((run) => run.id)).toEqual(['run-2']);
    expect(await suite.database.query('SELECT id FROM agent_runs')).toEqual([{ id: 'run-2' }]);
  });
});
