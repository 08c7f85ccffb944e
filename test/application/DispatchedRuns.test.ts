import { CronDeliveries } from '../../src/application/cron/CronDeliveries.js';
import { DispatchedRuns } from '../../src/application/cron/DispatchedRuns.js';
import { LeftOverCronAnswers } from '../../src/application/cron/LeftOverCronAnswers.js';
import type { TickRun } from '../../src/application/cron/RunDueJobs.js';
import { DeliveryLanes } from '../../src/application/delivery/DeliveryLanes.js';
import { describeTarget } from '../../src/domain/DeliveryTarget.js';
import { cronHarness } from '../support/cronHarness.js';

const MINUTE = 60_000;

const settle = async () => {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

/** A Telegram job due a minute ago, claimed, with DispatchedRuns on the harness (and the gateway's lanes when `lanes`). */
async function claimedJob(options: { lanes?: boolean } = {}) {
  const h = cronHarness({ platforms: ['telegram'] });
  await h.createJob.execute({ schedule: '1m', prompt: 'digest', name: 'digest', deliver: 'telegram' });
  h.clock.advance(MINUTE);
  const [claimed] = (await h.runDueJobs.claim({ limit: 1 })).claimed;
  const deliveries = options.lanes
    ? new CronDeliveries(
        h.pendings,
        new DeliveryLanes(2),
        new LeftOverCronAnswers(h.pendings, h.ledger, h.identity, h.clock, h.log),
        h.log,
        h.timer,
      )
    : null;
  const runs = new DispatchedRuns(h.execution, h.clock, h.settings, h.log, h.metrics, deliveries);
  const finished: string[] = [];
  runs.onFinished((run: TickRun) => finished.push(`${run.job.name}: ${run.report.outcome.status}`));
  return { h, claimed: claimed!, runs, finished };
}

describe('the runs the gateway dispatches', () => {
  it('deliver the answer in the slot without the lanes, and are told finished once the slot was freed', async () => {
    const { h, claimed, runs, finished } = await claimedJob();

    const run = runs.start(claimed, { signal: new AbortController().signal, waitedForSlot: false });
    const ran = await run.answered;

    expect(ran.pending).toBeNull();
    expect(h.channel.sent.map((each) => describeTarget(each.target))).toEqual(['telegram']);
    expect(finished).toEqual([]);
    run.finish(ran);
    expect(finished).toEqual(['digest: ok']);
    expect(h.metrics.runs).toEqual([{ kind: 'cron', outcome: 'ok', durationSeconds: 0 }]);
  });

  it("with the gateway's lanes free the slot once the answer is recorded, and are told finished once it was delivered", async () => {
    const { h, claimed, runs, finished } = await claimedJob({ lanes: true });
    let answer!: () => void;
    h.channel.held.set('telegram', new Promise<void>((resolve) => (answer = resolve)));

    const run = runs.start(claimed, { signal: new AbortController().signal, waitedForSlot: false });
    const ran = await run.answered;
    run.finish(ran);
    await settle();

    expect(ran.pending).not.toBeNull();
    expect(finished).toEqual([]);
    expect(h.log.entries.map((entry) => entry.message)).toContain(
      "job 'digest' answered; its answer waits in the delivery lane of telegram",
    );
    answer();
    await settle();
    expect(finished).toEqual(['digest: ok']);
    expect(h.metrics.runs.map((each) => each.outcome)).toEqual(['ok']);
  });

  it('log and count a late start, saying whether the job waited for a free run slot', async () => {
    const { h, claimed, runs } = await claimedJob();
    h.clock.advance(90_000);

    await runs.start(claimed, { signal: new AbortController().signal, waitedForSlot: true }).answered;

    const late = h.log.entries.find((entry) => entry.level === 'warn');
    expect(late?.message).toBe("job 'digest' started 90.0 s late: every run slot was busy (cron.max_parallel_jobs is 4)");
    expect(h.metrics.lateness).toEqual([90]);
  });

  it('tell the other listeners of a run that finished when one of them fails', async () => {
    const { h, claimed, runs, finished } = await claimedJob();
    runs.onFinished(() => {
      throw new Error('listener broke');
    });
    const after: string[] = [];
    runs.onFinished((run) => after.push(run.job.name));

    const run = runs.start(claimed, { signal: new AbortController().signal, waitedForSlot: false });
    run.finish(await run.answered);

    expect(finished).toEqual(['digest: ok']);
    expect(after).toEqual(['digest']);
    expect(h.log.entries.at(-1)).toMatchObject({ level: 'error', message: 'a listener of finished runs failed: listener broke' });
  });
});
