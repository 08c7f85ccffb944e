import 'reflect-metadata';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { FileEventOutbox } from '../../src/adapters/persistence/FileEventOutbox.js';
import type { PostgresDatabase } from '../../src/adapters/postgres/PostgresDatabase.js';
import { PostgresEventOutbox } from '../../src/adapters/postgres/PostgresEventOutbox.js';
import { InMemoryEventOutbox } from '../support/fakes/InMemoryEventOutbox.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { describeEventOutboxContract } from './EventOutbox.contract.js';

describeEventOutboxContract('InMemoryEventOutbox', async () => {
  const shared = new InMemoryEventOutbox();
  return { another: async () => shared.another() };
});

describeEventOutboxContract('FileEventOutbox', async () => {
  const home = await mkdtemp(join(tmpdir(), 'agent-event-outbox-'));
  return { another: async () => new FileEventOutbox(agentPathsFor(home)), cleanup: () => rm(home, { recursive: true, force: true }) };
});

describe('FileEventOutbox', () => {
  it('keeps a file per waiting entry under events/outbox and moves it to events/failed when given up on', async () => {
    const home = await mkdtemp(join(tmpdir(), 'agent-event-outbox-'));
    try {
      const outbox = new FileEventOutbox(agentPathsFor(home));
      const now = new Date('2030-01-01T00:00:00.000Z');
      await outbox.add(
        [{ subscription: 'ops', event: { id: 'msg_a/b', type: 'job.paused', timestamp: now.toISOString(), data: {}, subject: null } }],
        now,
      );
      expect(await readdir(join(home, 'events', 'outbox'))).toEqual(['ops.msg_a%2Fb.json']);

      await outbox.giveUp('ops', 'msg_a/b', 'refused', now);

      expect(await readdir(join(home, 'events', 'outbox'))).toEqual([]);
      expect(await readdir(join(home, 'events', 'failed'))).toEqual(['ops.msg_a%2Fb.json']);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
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

  describeEventOutboxContract('PostgresEventOutbox', async () => {
    if (pools.length === 0) pools.push(await scratch.open());
    await pools[0]!.query('TRUNCATE agent_event_outbox');
    return {
      another: async () => {
        const pool = await scratch.open();
        pools.push(pool);
        return new PostgresEventOutbox(pool);
      },
    };
  });
});
