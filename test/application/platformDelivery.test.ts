import { PlatformDelivery } from '../../src/application/delivery/PlatformDelivery.js';
import { RefreshChannelDirectory } from '../../src/application/delivery/RefreshChannelDirectory.js';
import { SendMessage } from '../../src/application/delivery/SendMessage.js';
import { PlatformSendError } from '../../src/application/ports/PlatformSender.js';
import type { PlatformTarget } from '../../src/domain/DeliveryTarget.js';
import { parseDeliveryTargets } from '../../src/domain/DeliveryTarget.js';
import { FakePlatforms } from '../support/fakes/FakePlatforms.js';
import { InMemoryChannelDirectory } from '../support/fakes/InMemoryChannelDirectory.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingTimer } from '../support/fakes/RecordingTimer.js';
import { SequentialIds } from '../support/fakes/SequentialIds.js';

const target = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;

function harness(platforms: FakePlatforms, directory = new InMemoryChannelDirectory()) {
  const timer = new RecordingTimer();
  const log = new RecordingLogger();
  const delivery = new PlatformDelivery(platforms, directory, timer, new SequentialIds(), log);
  return { delivery, timer, log, directory, platforms };
}

describe('PlatformDelivery: preflight', () => {
  const platforms = new FakePlatforms([
    { platform: 'telegram', configured: false, missing: [{ key: 'bot_token', variable: 'TELEGRAM_BOT_TOKEN' }] },
    { platform: 'slack', homeChannel: null },
    { platform: 'discord', homeChannel: 'not a channel!' },
    { platform: 'matrix', homeChannel: '!ops:example.org' },
  ]);
  const { delivery } = harness(platforms);

  it('names the missing setting and its environment variable for a platform that is not configured', () => {
    expect(delivery.problemWith(target('telegram:123'))).toBe(
      'Delivery platform "telegram" is not configured: set platforms.telegram.bot_token (or TELEGRAM_BOT_TOKEN) in config.yaml or the environment.',
    );
  });

  it('refuses the bare platform name when no home channel is set, and a home channel that does not parse', () => {
    expect(delivery.problemWith(target('slack'))).toMatch(
      /"slack" has no home channel: set platforms\.slack\.home_channel \(or SLACK_HOME_CHANNEL\)/,
    );
    expect(delivery.problemWith(target('slack:C0123456'))).toBeNull();
    expect(delivery.problemWith(target('discord'))).toMatch(/home_channel "not a channel!" is not a valid discord destination/);
  });

  it('refuses a destination the platform cannot address, before anything is sent, never falling back to the home channel', async () => {
    const threads = new FakePlatforms([{ platform: 'slack', homeChannel: 'C0HOME01:1700000000.000100' }]);
    threads.threadProblems.set('slack', 'this workspace takes no threads');
    const { delivery } = harness(threads);
    expect(delivery.problemWith(target('slack:C0123456:1700000000.000200'))).toBe(
      'Delivery target "slack:C0123456:1700000000.000200" cannot be delivered: this workspace takes no threads',
    );
    expect(delivery.problemWith(target('slack'))).toMatch(/cannot be delivered: this workspace takes no threads$/);
    expect(delivery.problemWith(target('slack:C0123456'))).toBeNull();
    await expect(delivery.deliver(target('slack:C0123456:1700000000.000200'), 'hello')).rejects.toThrow(/takes no threads/);
    expect(threads.senderOf('slack').sent).toEqual([]);
  });

  it('stands "all" for the home channel of every configured platform that has one', () => {
    expect(delivery.homeTargets()).toEqual([{ kind: 'platform', platform: 'matrix', destination: '!ops:example.org', threadId: null }]);
  });
});

describe('PlatformDelivery: destinations', () => {
  const slack = () => new FakePlatforms([{ platform: 'slack', homeChannel: '#general', aliases: { alerts: 'C0ALIAS01' } }]);

  it('resolves a #name through the channel directory', async () => {
    const { delivery, platforms } = harness(
      slack(),
      new InMemoryChannelDirectory({ updatedAt: null, platforms: { slack: [{ id: 'C0GENERAL', name: 'general' }] } }),
    );
    const receipt = await delivery.deliver(target('slack:#General'), 'hi');
    expect(receipt.chatId).toBe('C0GENERAL');
    expect(platforms.senderOf('slack').sent[0]!.to).toEqual({ chatId: 'C0GENERAL', threadId: null });
  });

  it('resolves the home channel when it is a name too', async () => {
    const { delivery, platforms } = harness(
      slack(),
      new InMemoryChannelDirectory({ updatedAt: null, platforms: { slack: [{ id: 'C0GENERAL', name: 'general' }] } }),
    );
    await delivery.deliver(target('slack'), 'hi');
    expect(platforms.senderOf('slack').sent[0]!.to.chatId).toBe('C0GENERAL');
  });

  it('lets an alias from config win over the directory', async () => {
    const { delivery, platforms } = harness(
      slack(),
      new InMemoryChannelDirectory({ updatedAt: null, platforms: { slack: [{ id: 'C0LISTED', name: 'alerts' }] } }),
    );
    await delivery.deliver(target('slack:#alerts'), 'hi');
    expect(platforms.senderOf('slack').sent[0]!.to.chatId).toBe('C0ALIAS01');
  });

  it('finds an exact name in the directory before a prefix of an alias: one list, config laid over it', async () => {
    const platforms = new FakePlatforms([{ platform: 'slack', aliases: { 'ops-alerts': 'C0ALIAS01' } }]);
    const { delivery } = harness(
      platforms,
      new InMemoryChannelDirectory({ updatedAt: null, platforms: { slack: [{ id: 'C0OPS0001', name: 'ops' }] } }),
    );

    expect((await delivery.deliver(target('slack:#ops'), 'hi')).chatId).toBe('C0OPS0001');
    expect((await delivery.deliver(target('slack:#ops-al'), 'hi')).chatId).toBe('C0ALIAS01');
  });

  it('resolves a #name through config channels on a platform that cannot list its channels', async () => {
    const platforms = new FakePlatforms([{ platform: 'telegram', aliases: { ops: '-1001234567890' } }]);
    const { delivery } = harness(platforms);

    expect((await delivery.deliver(target('telegram:#ops'), 'hi')).chatId).toBe('-1001234567890');
    await expect(delivery.deliver(target('telegram:#nowhere'), 'hi')).rejects.toThrow(
      'the telegram channel "#nowhere" is unknown; name it under platforms.telegram.channels in config.yaml, or use the chat id.',
    );
    expect(platforms.senderOf('telegram').sent).toHaveLength(1);
  });

  it('refuses an unknown #name, saying how to refresh, and sends nothing', async () => {
    const { delivery, platforms } = harness(slack());
    await expect(delivery.deliver(target('slack:#nowhere'), 'hi')).rejects.toThrow(
      'the slack channel "#nowhere" is unknown; run "agent channels list --refresh" to see the channels the bot can post to, or use the channel id.',
    );
    expect(platforms.senderOf('slack').sent).toEqual([]);
  });

  it('uses a friendly name the directory does not know as a raw id, with its thread', async () => {
    const { delivery, platforms } = harness(slack());
    await delivery.deliver(target('slack:C123:1700000000.000100'), 'hi');
    expect(platforms.senderOf('slack').sent[0]!.to).toEqual({ chatId: 'C123', threadId: '1700000000.000100' });
  });
});

describe('PlatformDelivery: parts and retries', () => {
  it('sends parts in order, each with its own idempotency key kept across its retries', async () => {
    const { delivery, platforms, timer } = harness(new FakePlatforms([{ platform: 'telegram' }]));
    const sender = platforms.senderOf('telegram');
    sender.failures.push(new PlatformSendError('unavailable', 'telegram is unavailable (HTTP 502)'));
    const receipt = await delivery.deliver(target('telegram:1'), 'word '.repeat(50));
    expect(receipt.messageIds).toEqual(['m1', 'm2', 'm3']);
    expect(sender.sent.map((sent) => sent.text.slice(-6))).toEqual([' (1/3)', ' (2/3)', ' (3/3)']);
    expect(new Set(sender.sent.map((sent) => sent.key)).size).toBe(3);
    expect(timer.waits).toEqual([1000]);
  });

  it('does not retry a sender that fails with something other than a platform error', async () => {
    const { delivery, platforms, timer } = harness(new FakePlatforms([{ platform: 'telegram' }]));
    platforms.senderOf('telegram').failures.push(new TypeError('boom'));
    await expect(delivery.deliver(target('telegram:1'), 'x')).rejects.toThrow('telegram: boom');
    expect(timer.waits).toEqual([]);
  });
});

describe('SendMessage', () => {
  it('checks every target before sending anything', async () => {
    const platforms = new FakePlatforms([
      { platform: 'telegram' },
      { platform: 'slack', configured: false, missing: [{ key: 'bot_token', variable: 'SLACK_BOT_TOKEN' }] },
    ]);
    const { delivery } = harness(platforms);
    await expect(new SendMessage(delivery).execute({ target: 'telegram:1,slack:C1', text: 'hi' })).rejects.toThrow(/SLACK_BOT_TOKEN/);
    expect(platforms.senderOf('telegram').sent).toEqual([]);
  });

  it('refuses targets that are not chat platforms and empty text', async () => {
    const { delivery } = harness(new FakePlatforms([{ platform: 'telegram' }]));
    await expect(new SendMessage(delivery).execute({ target: 'local', text: 'hi' })).rejects.toThrow(/is not a chat platform/);
    await expect(new SendMessage(delivery).execute({ target: 'telegram:1', text: '  \n' })).rejects.toThrow(/nothing to send/);
  });
});

describe('RefreshChannelDirectory', () => {
  it('keeps what a platform listed before when it cannot be listed now', async () => {
    const platforms = new FakePlatforms([
      { platform: 'slack', listsChannels: true },
      { platform: 'discord', listsChannels: true },
    ]);
    platforms.senderOf('slack').channels = [{ id: 'C1', name: 'general' }];
    platforms.senderOf('discord').failures.push(new PlatformSendError('unavailable', 'discord is unavailable (HTTP 503)'));
    const directory = new InMemoryChannelDirectory({
      updatedAt: '2026-01-01T00:00:00.000Z',
      platforms: { discord: [{ id: '42', name: 'ops' }] },
    });
    const refresh = new RefreshChannelDirectory(platforms, directory, new ManualClock('2026-06-01T08:00:00Z'), new RecordingLogger());
    const report = await refresh.execute();
    expect(report.listings).toEqual([
      { platform: 'slack', channels: 1 },
      { platform: 'discord', error: 'discord is unavailable (HTTP 503)' },
    ]);
    expect(directory.snapshot).toEqual({
      updatedAt: '2026-06-01T08:00:00.000Z',
      platforms: { slack: [{ id: 'C1', name: 'general' }], discord: [{ id: '42', name: 'ops' }] },
    });
  });
});
