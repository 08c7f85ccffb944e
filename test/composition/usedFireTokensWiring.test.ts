import 'reflect-metadata';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileUsedFireTokens } from '../../src/adapters/persistence/FileUsedFireTokens.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { PostgresUsedFireTokens } from '../../src/adapters/postgres/PostgresUsedFireTokens.js';
import { TOKENS } from '../../src/application/ports/tokens.js';
import { buildApplicationContainer } from '../../src/composition/applicationContainer.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';

describe('used fire tokens wiring', () => {
  const suite = scratchDatabaseForSuite();
  let home: string;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-used-fire-tokens-wiring-'));
    await writeFile(join(home, 'config.yaml'), '');
  });

  afterEach(() => rm(home, { recursive: true, force: true }));

  it('keeps the used fire tokens in files without a database', async () => {
    const { container } = await buildApplicationContainer(agentPathsFor(home), {}, new RecordingLogger());

    expect(container.get(TOKENS.UsedFireTokens)).toBeInstanceOf(FileUsedFireTokens);
  });

  it('keeps them in the configured database', async () => {
    const { container } = await buildApplicationContainer(agentPathsFor(home), { AGENT_DATABASE_URL: suite.url }, new RecordingLogger());
    const used = container.get(TOKENS.UsedFireTokens);

    expect(used).toBeInstanceOf(PostgresUsedFireTokens);
    expect(await used.remember('wired', new Date(Date.now() + 60_000), new Date())).toBe(true);
    expect(await suite.database.query('SELECT id FROM agent_used_fire_tokens')).toEqual([{ id: 'wired' }]);
  });
});
