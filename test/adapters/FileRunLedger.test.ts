import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { FileRunLedger } from '../../src/adapters/persistence/FileRunLedger.js';
import { InvalidInputError } from '../../src/domain/errors.js';
import { aRun, LEDGER_NOW } from '../contract/RunLedger.contract.js';
import { ManualClock } from '../support/fakes/ManualClock.js';

describe('FileRunLedger', () => {
  let home: string;
  let ledger: FileRunLedger;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-run-ledger-'));
    ledger = new FileRunLedger(agentPathsFor(home), new ManualClock(LEDGER_NOW.toISOString()));
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('writes runs/<kind>/<job or route>/<start in UTC>_<id>.json, 0600 in 0700 directories', async () => {
    await ledger.save(aRun(1));

    const directory = join(home, 'runs', 'cron', 'job1');
    expect(await readdir(directory)).toEqual(['20260620-080100-000_run-1.json']);
    expect((await stat(join(directory, '20260620-080100-000_run-1.json'))).mode & 0o777).toBe(0o600);
    for (const each of [join(home, 'runs'), join(home, 'runs', 'cron'), directory]) expect((await stat(each)).mode & 0o777).toBe(0o700);
  });

  it('reads without creating anything, and passes over a file a crash left half written', async () => {
    expect(await ledger.list({ limit: 5 })).toEqual([]);
    expect(await ledger.get('run-1')).toBeNull();
    expect(existsSync(join(home, 'runs'))).toBe(false);

    await ledger.save(aRun(1));
    await writeFile(join(home, 'runs', 'cron', 'job1', '20260620-080200-000_run-2.json'), '{"id": "run-2", "ki');
    expect((await ledger.list({ limit: 5 })).map((run) => run.id)).toEqual(['run-1']);
  });

  it.each([
    ['a job id', aRun(1, { subject: '../jobs' })],
    ['a run id', aRun(1, { id: 'a/b' })],
  ])('refuses %s that would lead out of its directory, writing nothing', async (_what, run) => {
    await expect(ledger.save(run)).rejects.toThrow(InvalidInputError);
    expect(existsSync(join(home, 'runs'))).toBe(false);
  });
});
