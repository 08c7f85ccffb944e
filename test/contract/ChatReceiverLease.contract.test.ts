import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileChatReceiverLease } from '../../src/adapters/chat/FileChatReceiverLease.js';
import { PostgresChatReceiverLease } from '../../src/adapters/postgres/PostgresChatReceiverLease.js';
import type { PostgresDatabase } from '../../src/adapters/postgres/PostgresDatabase.js';
import { InMemoryChatReceiverLease, SharedReceiverRole } from '../support/fakes/InMemoryChatReceiverLease.js';
import { eventually } from '../support/processLiveness.js';
import { cutChatReceiverSession, scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { describeChatReceiverLeaseContract } from './ChatReceiverLease.contract.js';

describeChatReceiverLeaseContract('InMemoryChatReceiverLease', async () => {
  const role = new SharedReceiverRole();
  return { another: async () => new InMemoryChatReceiverLease(role) };
});

describeChatReceiverLeaseContract('FileChatReceiverLease', async () => {
  const home = await mkdtemp(join(tmpdir(), 'agent-receiver-lease-'));
  return { another: async () => new FileChatReceiverLease(home), cleanup: () => rm(home, { recursive: true, force: true }) };
});

describe('on PostgreSQL', () => {
  let scratch: ScratchDatabase;
  /** One pool per gateway: each lease on a pool of its own, as replicas hold them. */
  const pools: PostgresDatabase[] = [];

  beforeAll(async () => {
    scratch = await scratchDatabase();
  });

  afterAll(async () => {
    for (const pool of pools.splice(0)) await pool.close();
    await scratch?.drop();
  });

  const leaseOnPoolOfItsOwn = async () => {
    const pool = await scratch.open();
    pools.push(pool);
    return new PostgresChatReceiverLease(pool);
  };

  describeChatReceiverLeaseContract('PostgresChatReceiverLease', async () => ({ another: leaseOnPoolOfItsOwn }));

  it('tells the holder it lost the role when its connection is cut, and frees it for another', async () => {
    const [holder, next] = [await leaseOnPoolOfItsOwn(), await leaseOnPoolOfItsOwn()];
    let lost = 0;
    expect(await holder.tryTake(() => (lost += 1))).toBe(true);

    // The server ends the holder's session, as a restart of the server or a cut network would.
    await cutChatReceiverSession(pools[0]!);

    expect(await eventually(() => lost === 1, 5000)).toBe(true);
    expect(await next.tryTake(() => undefined)).toBe(true);
    await next.release();
  });
});
