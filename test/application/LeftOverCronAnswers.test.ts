import { LeftOverCronAnswers } from '../../src/application/cron/LeftOverCronAnswers.js';
import { describeTarget } from '../../src/domain/DeliveryTarget.js';
import type { PendingJobDelivery } from '../../src/application/cron/JobExecution.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { cronHarness } from '../support/cronHarness.js';

const MINUTE = 60_000;

/** A run of a Telegram job whose answer was recorded by `test-host:1` and waits for its delivery. */
async function answerLeftWaiting() {
  const h = cronHarness({ platforms: ['telegram'] });
  const job = await h.createJob.execute({ schedule: '1m', prompt: 'digest', name: 'digest', deliver: 'telegram' });
  h.clock.advance(MINUTE);
  const [claimed] = (await h.runDueJobs.claim({ limit: 1 })).claimed;
  const answered = await h.execution.answerClaimed(claimed!.job, h.clock.now(), { slot: claimed!.dueAt });
  expect(answered.pending).not.toBeNull();
  return { h, job, record: answered.pending!.record };
}

/** The answers a gateway running as `claimant` takes over, where `test-host:1` is dead unless `alive`. */
async function takenOverBy(h: ReturnType<typeof cronHarness>, claimant: string, options: { alive?: boolean } = {}) {
  const identity = new FakeProcessIdentity(claimant);
  if (!options.alive) identity.dead.add('test-host:1');
  const handed: PendingJobDelivery[] = [];
  const count = await new LeftOverCronAnswers(h.pendings, h.ledger, identity, h.clock, h.log).takeOver((pending) => handed.push(pending));
  return { count, handed };
}

describe('the cron answers a stopped gateway left waiting', () => {
  it('are claimed in the ledger by the first gateway to start and handed on for the targets not reached, without running the agent', async () => {
    const { h, record } = await answerLeftWaiting();

    const first = await takenOverBy(h, 'test-host:2');
    const second = await takenOverBy(h, 'test-host:3');

    expect(first.count).toBe(1);
    expect(first.handed.map((pending) => pending.record.id)).toEqual([record.id]);
    expect(first.handed[0]!.toSend.map(describeTarget)).toEqual(['telegram']);
    expect((await h.ledger.get(record.id))?.redelivery_claim).toMatchObject({ by: 'test-host:2' });
    expect(second).toEqual({ count: 0, handed: [] });
    expect(h.agent.requests).toHaveLength(1);
    expect(h.log.entries.map((entry) => entry.message)).toContainEqual(expect.stringContaining('left waiting by a stopped gateway'));
  });

  it('are left to the gateway delivering them while it lives', async () => {
    const { h, record } = await answerLeftWaiting();

    expect(await takenOverBy(h, 'test-host:2', { alive: true })).toEqual({ count: 0, handed: [] });
    expect((await h.ledger.get(record.id))?.redelivery_claim).toMatchObject({ by: 'test-host:1' });
  });

  it('wait for the next start when the ledger cannot be read, and the failure is logged', async () => {
    const { h } = await answerLeftWaiting();
    h.ledger.pendingDeliveries = async () => {
      throw new Error('disk on fire');
    };

    expect(await takenOverBy(h, 'test-host:2')).toEqual({ count: 0, handed: [] });
    expect(h.log.entries.at(-1)).toMatchObject({
      level: 'error',
      message: 'cannot read the cron answers still waiting for delivery: disk on fire',
    });
  });
});
