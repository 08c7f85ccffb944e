import { CronDeliveries } from '../../src/application/cron/CronDeliveries.js';
import { DispatchDueJobs } from '../../src/application/cron/DispatchDueJobs.js';
import { DispatchedRuns } from '../../src/application/cron/DispatchedRuns.js';
import { LeftOverCronAnswers } from '../../src/application/cron/LeftOverCronAnswers.js';
import { DeliveryLanes } from '../../src/application/delivery/DeliveryLanes.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { cronHarness } from '../support/cronHarness.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

const settle = async () => {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

/** A platform that does not answer until the test lets it. */
function hang(h: ReturnType<typeof cronHarness>, platform: string): () => void {
  let answer!: () => void;
  h.channel.held.set(platform, new Promise<void>((resolve) => (answer = resolve)));
  return answer;
}

/** The gateway's cron side on the harness's fakes: the dispatcher, its deliveries and the lanes they share. */
function gateway(h: ReturnType<typeof cronHarness>, identity = h.identity) {
  const lanes = new DeliveryLanes(2);
  const leftOver = new LeftOverCronAnswers(h.pendings, h.ledger, identity, h.clock, h.log);
  const deliveries = new CronDeliveries(h.pendings, lanes, leftOver, h.log, h.timer);
  const runs = new DispatchedRuns(h.execution, h.clock, h.settings, h.log, h.metrics, deliveries);
  const dispatcher = new DispatchDueJobs(h.runDueJobs, runs, h.timer, h.settings, h.log);
  const finished: string[] = [];
  const released: string[] = [];
  dispatcher.onRunFinished((run) => finished.push(`${run.job.name}: ${run.report.outcome.status}`));
  dispatcher.onJobReleased((jobId) => released.push(jobId));
  return { lanes, deliveries, dispatcher, finished, released };
}

describe("the gateway delivering cron answers in the platforms' lanes", () => {
  it('frees each run slot once the answer is recorded: four runs whose Telegram hangs leave the slots to a Slack job due after them', async () => {
    const h = cronHarness({ platforms: ['telegram', 'slack'], settings: { maxParallelJobs: 4 } });
    const g = gateway(h);
    hang(h, 'telegram');
    const hanging = [];
    for (const n of [1, 2, 3, 4])
      hanging.push(
        await h.createJob.execute({ schedule: 'every 1h', prompt: `telegram ${n}`, name: `telegram-${n}`, deliver: 'telegram' }),
      );
    h.clock.advance(60 * MINUTE);
    await g.dispatcher.dispatch();
    await settle();

    expect(g.dispatcher.inProgress).toBe(0);
    expect(g.released).toHaveLength(4);
    for (const job of hanging)
      expect(h.repository.get(job.id)).toMatchObject({ state: 'scheduled', repeat: { completed: 1 }, claim: null });

    const slack = await h.createJob.execute({ schedule: '1m', prompt: 'slack', name: 'slack', deliver: 'slack' });
    h.clock.advance(MINUTE);
    await g.dispatcher.dispatch();
    await settle();

    expect(h.channel.sent.map((each) => each.target.platform)).toEqual(['slack']);
    expect(h.repository.get(slack.id)).toMatchObject({ state: 'completed', last_status: 'ok' });
    expect(g.finished).toEqual(['slack: ok']);
    // The hanging platform's answers wait in its lane, two under way.
    expect(g.deliveries.size).toBe(4);
    for (const job of hanging) expect(h.repository.get(job.id)!.last_status).toBeNull();
  });

  it('writes last_status only once the platform answered, and the ledger shows the run delivering until then', async () => {
    const h = cronHarness({ platforms: ['telegram'] });
    const g = gateway(h);
    const answer = hang(h, 'telegram');
    const job = await h.createJob.execute({ schedule: '1m', prompt: 'digest', name: 'digest', deliver: 'telegram' });
    h.clock.advance(MINUTE);
    await g.dispatcher.dispatch();
    await settle();

    expect(h.repository.get(job.id)).toMatchObject({ state: 'completed', last_status: null, last_run_at: null, claim: null });
    const [waiting] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 5 });
    expect(waiting).toMatchObject({
      status: 'running',
      finished_at: null,
      answer: 'All good.',
      delivery_pending: true,
      redelivery_claim: { by: 'test-host:1' },
    });
    expect(h.ledger.saves.filter((save) => save.pending)).toHaveLength(1);
    expect(g.finished).toEqual([]);

    answer();
    await settle();

    expect(h.repository.get(job.id)).toMatchObject({ state: 'completed', last_status: 'ok', last_delivery_error: null, failure_streak: 0 });
    expect(h.repository.get(job.id)!.last_run_at).not.toBeNull();
    const [ended] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 5 });
    expect(ended).toMatchObject({
      status: 'ok',
      delivery_pending: false,
      redelivery_claim: null,
      deliveries: [{ target: 'telegram', outcome: 'delivered' }],
    });
    expect(ended!.finished_at).not.toBeNull();
    expect(await h.outputs.list(job.id)).toHaveLength(1);
    expect(g.finished).toEqual(['digest: ok']);
  });

  it("records delivery_failed with the platform's refusal only once the platform refused", async () => {
    const h = cronHarness({ platforms: ['telegram'] });
    const g = gateway(h);
    const answer = hang(h, 'telegram');
    h.channel.failing.add('telegram');
    h.channel.refusals.set('telegram', 'Bad Request: chat not found');
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'digest', name: 'digest', deliver: 'telegram' });
    h.clock.advance(60 * MINUTE);
    await g.dispatcher.dispatch();
    await settle();
    expect(h.repository.get(job.id)).toMatchObject({ state: 'scheduled', last_status: null, last_delivery_error: null });

    answer();
    await settle();

    expect(h.repository.get(job.id)).toMatchObject({
      state: 'scheduled',
      last_status: 'delivery_failed',
      last_error: null,
      failure_streak: 1,
    });
    expect(h.repository.get(job.id)!.last_delivery_error).toContain('chat not found');
    expect(g.finished).toEqual(['digest: delivery_failed']);
  });

  it('delivers the answers a stopped gateway left waiting once, at the next start, without running the agent again', async () => {
    const h = cronHarness({ platforms: ['telegram', 'slack'] });
    const before = gateway(h);
    hang(h, 'telegram');
    const job = await h.createJob.execute({ schedule: '1m', prompt: 'digest', name: 'digest', deliver: 'telegram,slack' });
    h.clock.advance(MINUTE);
    await before.dispatcher.dispatch();
    await settle();
    // Slack got it; Telegram hangs, and the gateway is stopped (then gone).
    expect(h.channel.sent.map((each) => each.target.platform)).toEqual(['slack']);
    const stopping = before.deliveries.stop(0, 0);
    for (let i = 0; i < 3; i += 1) {
      h.timer.advance(0);
      await settle();
    }
    expect(await stopping).toBe(false);
    expect(h.agent.requests).toHaveLength(1);
    h.channel.held.delete('telegram');

    // Two gateways start on the ledger; the one that stopped is dead.
    const starts = ['test-host:2', 'test-host:3'].map((name) => {
      const identity = new FakeProcessIdentity(name);
      identity.dead.add('test-host:1');
      return gateway(h, identity);
    });
    const resumed = await Promise.all(starts.map((started) => started.deliveries.resumeLeftOver()));
    await settle();

    expect(resumed.sort()).toEqual([0, 1]);
    expect(h.agent.requests).toHaveLength(1);
    expect(h.channel.sent.map((each) => each.target.platform)).toEqual(['slack', 'telegram']);
    expect(h.repository.get(job.id)).toMatchObject({ state: 'completed', last_status: 'ok' });
    const [ended] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 5 });
    expect(ended).toMatchObject({ status: 'ok', delivery_pending: false, redelivery_claim: null });
    expect(ended!.deliveries.map((each) => `${each.target}: ${each.outcome}`)).toEqual(['slack: delivered', 'telegram: delivered']);
    expect(await h.ledger.pendingDeliveries('cron')).toEqual([]);
    // And a third start finds nothing left.
    expect(await gateway(h, new FakeProcessIdentity('test-host:4')).deliveries.resumeLeftOver()).toBe(0);
  });

  it('leaves an answer a live gateway is delivering to that gateway', async () => {
    const h = cronHarness({ platforms: ['telegram'] });
    const first = gateway(h);
    const answer = hang(h, 'telegram');
    await h.createJob.execute({ schedule: '1m', prompt: 'digest', name: 'digest', deliver: 'telegram' });
    h.clock.advance(MINUTE);
    await first.dispatcher.dispatch();
    await settle();

    expect(await gateway(h, new FakeProcessIdentity('test-host:2')).deliveries.resumeLeftOver()).toBe(0);
    answer();
    await settle();
    expect(h.channel.sent).toHaveLength(1);
  });
});
