import { ShowRun } from '../../../src/application/runs/ShowRun.js';
import { RunError } from '../../../src/domain/errors.js';
import { aRun, aTranscript, LEDGER_NOW } from '../../contract/RunLedger.contract.js';
import { InMemoryRunLedger } from '../../support/fakes/InMemoryRunLedger.js';

describe('ShowRun', () => {
  it('gives a run with its transcript, and null for a run that kept none', async () => {
    const ledger = new InMemoryRunLedger(undefined, () => LEDGER_NOW);
    await ledger.save(aRun(1));
    await ledger.save(aRun(2));
    await ledger.saveTranscript(aRun(1), aTranscript(1));

    expect(await new ShowRun(ledger).execute({ id: ' run-1 ' })).toEqual({ run: aRun(1), transcript: aTranscript(1) });
    expect(await new ShowRun(ledger).execute({ id: 'run-2' })).toEqual({ run: aRun(2), transcript: null });
  });

  it('refuses an id the ledger does not keep, saying where the ids are listed', async () => {
    const showing = new ShowRun(new InMemoryRunLedger(undefined, () => LEDGER_NOW)).execute({ id: 'nope' });

    await expect(showing).rejects.toThrow(RunError);
    await expect(showing).rejects.toThrow(
      'No run has the id "nope"; "agent cron runs <job> --json" and "agent webhook runs --json" list the runs with their ids.',
    );
  });
});
