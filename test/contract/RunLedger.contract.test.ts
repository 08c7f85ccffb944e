import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfig } from '../../src/adapters/config/AgentConfig.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { FileRunLedger } from '../../src/adapters/persistence/FileRunLedger.js';
import { PostgresRunLedger } from '../../src/adapters/postgres/PostgresRunLedger.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { InMemoryRunLedger } from '../support/fakes/InMemoryRunLedger.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';
import { describeRunLedgerContract, LEDGER_NOW, type RunLedgerSubject } from './RunLedger.contract.js';
import { describeRunLedgerSearchContract } from './RunLedgerSearch.contract.js';
import type { RunRetention } from '../../src/domain/runs/RunRecord.js';

/** Both contracts, the ledger's and its search's, on one kind of subject. */
function describeBoth(name: string, make: (retention: RunRetention) => Promise<RunLedgerSubject>): void {
  describeRunLedgerContract(name, make);
  describeRunLedgerSearchContract(name, make);
}

describeBoth('InMemoryRunLedger', async (retention) => {
  const ledger = new InMemoryRunLedger(retention, () => LEDGER_NOW);
  return { ledger, another: async () => ledger };
});

describeBoth('FileRunLedger', async (retention) => {
  const home = await mkdtemp(join(tmpdir(), 'agent-run-ledger-'));
  const config = { runs: { retention_count: retention.count, retention_days: retention.days } } as AgentConfig;
  const make = () => new FileRunLedger(agentPathsFor(home), new ManualClock(LEDGER_NOW.toISOString()), config);
  return { ledger: make(), another: async () => make(), cleanup: () => rm(home, { recursive: true, force: true }) };
});

describe('on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();

  describeBoth('PostgresRunLedger', async (retention) => {
    await suite.database.query('TRUNCATE agent_runs, agent_run_transcripts');
    const make = () => new PostgresRunLedger(suite.database, retention, new ManualClock(LEDGER_NOW));
    return { ledger: make(), another: async () => make() };
  });
});
