import 'reflect-metadata';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { FileUsedFireTokens } from '../../src/adapters/persistence/FileUsedFireTokens.js';
import type { PostgresDatabase } from '../../src/adapters/postgres/PostgresDatabase.js';
import { PostgresUsedFireTokens } from '../../src/adapters/postgres/PostgresUsedFireTokens.js';
import { InMemoryUsedFireTokens, SharedUsedFireTokens } from '../support/fakes/InMemoryUsedFireTokens.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { describeUsedFireTokensContract } from './UsedFireTokens.contract.js';

describeUsedFireTokensContract('InMemoryUsedFireTokens', async () => {
  const shared = new SharedUsedFireTokens();
  return { another: async () => new InMemoryUsedFireTokens(shared) };
});

describeUsedFireTokensContract('FileUsedFireTokens', async () => {
  const home = await mkdtemp(join(tmpdir(), 'agent-used-fire-tokens-'));
  return { another: async () => new FileUsedFireTokens(agentPathsFor(home)), cleanup: () => rm(home, { recursive: true, force: true }) };
});

describe('FileUsedFireTokens', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-used-fire-tokens-'));
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('keeps one file per id under cron/fire_tokens, and none once they are forgotten or expired', async () => {
    const used = new FileUsedFireTokens(agentPathsFor(home));
    const directory = join(home, 'cron', 'fire_tokens');
    const now = new Date('2030-01-01T01:00:00.000Z');
    await used.remember('a'.repeat(64), new Date(now.getTime() + 60_000), now);
    await used.remember('b'.repeat(64), new Date(now.getTime() + 120_000), now);
    expect((await readdir(directory)).filter((name) => !name.startsWith('.')).sort()).toEqual(['a'.repeat(64), 'b'.repeat(64)]);

    await used.forget('a'.repeat(64));
    await used.forgetExpired(new Date(now.getTime() + 120_000));

    expect((await readdir(directory)).filter((name) => !name.startsWith('.'))).toEqual([]);
  });

  it('refuses an id that is not a plain name, so that no path leaves its directory', async () => {
    const used = new FileUsedFireTokens(agentPathsFor(home));
    await expect(used.remember('../../escape', new Date(), new Date())).rejects.toThrow(RangeError);
  });

  it('fails with the directory named when it cannot be made', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(home, 'cron'), 'a file where the directory should be');
    const used = new FileUsedFireTokens(agentPathsFor(home));
    await expect(used.remember('a1', new Date(), new Date())).rejects.toThrow(
      /Cannot remember the fire tokens used in .*fire_tokens: part of the path is a file/,
    );
  });
});

describe('on PostgreSQL', () => {
  let scratch: ScratchDatabase;
  /** One pool per gateway, as replicas hold them. */
  const pools: PostgresDatabase[] = [];

  beforeAll(async () => {
    scratch = await scratchDatabase();
  });

  afterAll(async () => {
    for (const pool of pools.splice(0)) await pool.close();
    await scratch?.drop();
  });

  describeUsedFireTokensContract('PostgresUsedFireTokens', async () => {
    if (pools.length === 0) pools.push(await scratch.open());
    await pools[0]!.query('TRUNCATE agent_used_fire_tokens');
    return {
      another: async () => {
        const pool = await scratch.open();
        pools.push(pool);
        return new PostgresUsedFireTokens(pool);
      },
    };
  });
});
