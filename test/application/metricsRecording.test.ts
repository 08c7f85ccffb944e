import { PlatformDelivery } from '../../src/application/delivery/PlatformDelivery.js';
import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import { PlatformSendError } from '../../src/application/ports/PlatformSender.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../src/domain/DeliveryTarget.js';
import { FakePlatforms } from '../support/fakes/FakePlatforms.js';
import { InMemoryChannelDirectory } from '../support/fakes/InMemoryChannelDirectory.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingMetrics } from '../support/fakes/RecordingMetrics.js';
import { RecordingTimer } from '../support/fakes/RecordingTimer.js';
import { SequentialIds } from '../support/fakes/SequentialIds.js';
import { cronHarness } from '../support/cronHarness.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

const settle = async () => {
  for (let i = 0; i < 10; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('what the gateway records for its metrics', () => {
  it('a cron run: how late it started, then its last_status and how long it took', async () => {
    const h = cronHarness();
    const answers: Array<(text: string) => void> = [];
    h.agent.defaultReply = () => new Promise<string>((resolve) => answers.push(resolve));
    await h.createJob.execute({ schedule: 'every 1m', prompt: 'job report', name: 'report', deliver: 'local' });
    h.clock.advance(MINUTE + 3 * SECOND);

    await h.dispatchDueJobs.dispatch();
    await settle();
    h.clock.advance(10 * SECOND);
    answers[0]!('All good.');
    await settle();

    expect(h.metrics.lateness).toEqual([3]);
    expect(h.metrics.runs).toEqual([{ kind: 'cron', outcome: 'ok', durationSeconds: 10 }]);
  });

  it('a cron run that fails is counted by its last_status', async () => {
    const h = cronHarness();
    h.agent.defaultReply = () => Promise.reject(new AgentRunError('failed', 'The model refused.'));
    await h.createJob.execute({ schedule: 'every 1m', prompt: 'job report', name: 'report', deliver: 'local' });
    h.clock.advance(MINUTE);

    await h.dispatchDueJobs.dispatch();
    await settle();

    expect(h.metrics.lateness).toEqual([0]);
    expect(h.metrics.runs).toEqual([{ kind: 'cron', outcome: 'error', durationSeconds: 0 }]);
  });

  it('a delivery to a platform, delivered or failed', async () => {
    const platforms = new FakePlatforms([{ platform: 'telegram', homeChannel: '123' }]);
    const metrics = new RecordingMetrics();
    const delivery = new PlatformDelivery(
      platforms,
      new InMemoryChannelDirectory(),
      new RecordingTimer(),
      new SequentialIds(),
      new RecordingLogger(),
      metrics,
    );
    const telegram = parseDeliveryTargets('telegram:123')[0] as PlatformTarget;
    const slack = parseDeliveryTargets('slack:C0123456')[0] as PlatformTarget;

    await delivery.deliver(telegram, 'Hello');
    platforms.senderOf('telegram').failures.push(new PlatformSendError('refused', 'telegram: chat not found'));
    await expect(delivery.deliver(telegram, 'Hello')).rejects.toThrow(/chat not found/);
    await expect(delivery.deliver(slack, 'Hello')).rejects.toThrow();

    expect(metrics.deliveries).toEqual([
      { platform: 'telegram', outcome: 'delivered' },
      { platform: 'telegram', outcome: 'failed' },
      { platform: 'slack', outcome: 'failed' },
    ]);
  });
});
