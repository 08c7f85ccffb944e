import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileWebhookInbox } from '../../src/adapters/persistence/FileWebhookInbox.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { PostgresWebhookInbox } from '../../src/adapters/postgres/PostgresWebhookInbox.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { InMemoryWebhookInbox } from '../support/fakes/InMemoryWebhookInbox.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingOrphanProcesses } from '../support/fakes/RecordingOrphanProcesses.js';
import { describeWebhookInboxContract } from './WebhookInbox.contract.js';

/** A clock a minute ahead of the events the tests make with `new Date()`: those are in its past. */
const aheadClock = () => new ManualClock(new Date(Date.now() + 60_000));

describeWebhookInboxContract('InMemoryWebhookInbox', async () => {
  const clock = aheadClock();
  let current = new InMemoryWebhookInbox(undefined, clock);
  return {
    inbox: current,
    clock,
    restart: async () => (current = current.restarted()),
  };
});

describeWebhookInboxContract('FileWebhookInbox', async () => {
  const home = await mkdtemp(join(tmpdir(), 'agent-inbox-contract-'));
  const paths = agentPathsFor(home);
  let generation = 1;
  const dead = new Set<string>();
  const opened: FileWebhookInbox[] = [];
  const clock = aheadClock();
  const open = () => {
    const identity = new FakeProcessIdentity(`test-host:${generation}`);
    for (const claimant of dead) identity.dead.add(claimant);
    const inbox = new FileWebhookInbox(paths, identity, clock, new RecordingLogger(), new RecordingOrphanProcesses());
    opened.push(inbox);
    return inbox;
  };
  return {
    inbox: open(),
    clock,
    restart: async () => {
      // A dead process's files are closed, and its journal's lock with them.
      await opened.at(-1)!.close();
      dead.add(`test-host:${generation}`);
      generation += 1;
      return open();
    },
    cleanup: async () => {
      await Promise.all(opened.map((inbox) => inbox.close()));
      await rm(home, { recursive: true, force: true });
    },
  };
});

describe('on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();

  describeWebhookInboxContract('PostgresWebhookInbox', async () => {
    await suite.database.query(
      'TRUNCATE agent_webhook_events, agent_webhook_deliveries, agent_gateways, agent_webhook_groups, agent_webhook_group_events',
    );
    let generation = 1;
    const dead = new Set<string>();
    const clock = aheadClock();
    const open = () => {
      // Each process is another pid on this host, which sees the earlier ones dead.
      const identity = new FakeProcessIdentity(`test-host:${generation}`);
      for (const claimant of dead) identity.dead.add(claimant);
      return new PostgresWebhookInbox(suite.database, identity, clock);
    };
    return {
      inbox: open(),
      clock,
      // Killed with -9: its claims stay in the database, and it holds no lease.
      restart: async () => {
        dead.add(`test-host:${generation}`);
        generation += 1;
        return open();
      },
    };
  });
});
