import { describe, expect, it } from '@jest/globals';
import type { RunRecord } from '../../src/domain/runs/RunRecord.js';
import { RUNNING_RECORD_AFTER_MS } from '../../src/domain/runs/RunRecord.js';
import { claimJob } from '../../src/domain/jobLifecycle.js';
import { ManualTimer } from '../support/fakes/ManualTimer.js';
import { anHourlyJob } from '../support/jobs.js';
import { cronHarness } from '../support/cronHarness.js';
import { cronRunPipeline } from '../support/runPipeline.js';

/** A cron run is written to the run ledger once when it ends at once, and shown running first when it goes on. */
describe('the ledger record of a cron run', () => {
  function setUp() {
    const h = cronHarness({ jobs: [anHourlyJob('a1b2c3d4e5f6')] });
    const timer = new ManualTimer();
    const saved: Array<Pick<RunRecord, 'id' | 'status'>> = [];
    const save = h.ledger.save.bind(h.ledger);
    h.ledger.save = async (run: RunRecord) => {
      saved.push({ id: run.id, status: run.status });
      await save(run);
    };
    const execution = cronRunPipeline({ ...h, timer }).execution;
    const job = claimJob(anHourlyJob('a1b2c3d4e5f6'), 'host:1', h.clock.now(), 'UTC');
    return { h, timer, saved, execution, job };
  }

  it('is written once, finished, for a run that ends before it would show as running', async () => {
    const { saved, execution, job, h } = setUp();

    await execution.runClaimed(job, h.clock.now());

    expect(saved.map((run) => run.status)).toEqual(['ok']);
  });

  it('shows a run still going after a second as running, then as finished', async () => {
    const { saved, execution, job, h, timer } = setUp();
    let answer!: (text: string) => void;
    h.agent.reply(() => new Promise<string>((resolve) => (answer = resolve)));

    const run = execution.runClaimed(job, h.clock.now());
    await new Promise((resolve) => setImmediate(resolve));
    timer.advance(RUNNING_RECORD_AFTER_MS);
    await new Promise((resolve) => setImmediate(resolve));
    expect(saved.map((record) => record.status)).toEqual(['running']);
    answer('Done.');
    await run;

    expect(saved.map((record) => record.status)).toEqual(['running', 'ok']);
    expect(new Set(saved.map((record) => record.id)).size).toBe(1);
  });
});
