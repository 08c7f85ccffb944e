import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfig } from '../../src/adapters/config/AgentConfig.js';
import { FileWebhookRunRecords } from '../../src/adapters/persistence/FileWebhookRunRecords.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { PostgresWebhookRunRecords } from '../../src/adapters/postgres/PostgresWebhookRunRecords.js';
import type { CronSettings } from '../../src/application/ports/Settings.js';
import { InMemoryWebhookRunRecords } from '../support/fakes/InMemoryWebhookRunRecords.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';
import { describeWebhookRunRecordsContract } from './WebhookRunRecords.contract.js';

describeWebhookRunRecordsContract('InMemoryWebhookRunRecords', async (keep) => ({ records: new InMemoryWebhookRunRecords(keep) }));

describeWebhookRunRecordsContract('FileWebhookRunRecords', async (keep) => {
  const home = await mkdtemp(join(tmpdir(), 'agent-webhook-records-contract-'));
  const config = { platforms: { webhook: { extra: { output_retention: keep } } } } as unknown as AgentConfig;
  return {
    records: new FileWebhookRunRecords(agentPathsFor(home), { timeZone: 'Europe/Berlin' } as CronSettings, config),
    cleanup: () => rm(home, { recursive: true, force: true }),
  };
});

describe('on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();

  describeWebhookRunRecordsContract('PostgresWebhookRunRecords', async (keep) => {
    await suite.database.query('TRUNCATE agent_webhook_runs');
    return { records: new PostgresWebhookRunRecords(suite.database, keep) };
  });
});
