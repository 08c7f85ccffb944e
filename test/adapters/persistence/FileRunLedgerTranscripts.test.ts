import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { FileRunLedger } from '../../../src/adapters/persistence/FileRunLedger.js';
import { aRun, aTranscript, LEDGER_NOW } from '../../contract/RunLedger.contract.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';

describe('run transcripts in files', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-transcripts-'));
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  const ledgerWith = (count: number) =>
    new FileRunLedger(agentPathsFor(home), new ManualClock(LEDGER_NOW.toISOString()), {
      runs: { retention_count: count, retention_days: 30 },
    } as AgentConfig);

  it('writes each beside its job runs, private, and deletes the file with its run record', async () => {
    const ledger = ledgerWith(2);
    for (let n = 1; n <= 3; n += 1) {
      await ledger.save(aRun(n));
      await ledger.saveTranscript(aRun(n), aTranscript(n));
    }
    await ledger.save(aRun(4));

    const directory = join(home, 'runs', 'cron', 'job1', '.transcripts');
    expect((await readdir(directory)).sort()).toEqual(['run-3.json']);
    expect((await stat(join(directory, 'run-3.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(directory)).mode & 0o777).toBe(0o700);
  });
});
