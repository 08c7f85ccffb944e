import { ChatReceivers, type ReceiverRecipe } from '../../../src/application/chat/ChatReceivers.js';
import type { InboundChatSource, ReceiverHealth } from '../../../src/application/ports/InboundChat.js';
import type { ChatReceiverStatus } from '../../../src/domain/chat/chatReceivers.js';
import { receiverRetryDelayMs, RECEIVER_RETRY_MAX_MS } from '../../../src/domain/chat/chatReceivers.js';
import type { ConversationKey, InboundMessage } from '../../../src/domain/chat/inboundMessage.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingMetrics } from '../../support/fakes/RecordingMetrics.js';
import { RecordingTimer } from '../../support/fakes/RecordingTimer.js';

const settled = async () => {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

/** A platform whose start fails while `failing` is set; what it was told is kept. */
class ScriptedPlatform {
  failing: string | null = null;
  starts = 0;
  stops = 0;
  health: ReceiverHealth | null = null;
  typed: ConversationKey[] = [];

  constructor(readonly platform: string) {}

  /** A new source over this platform, as the gateway makes one for each start. */
  source(): InboundChatSource {
    return {
      platform: this.platform,
      start: async (_deliver: (message: InboundMessage) => Promise<void>, health?: ReceiverHealth) => {
        this.starts += 1;
        if (this.failing !== null) throw new Error(this.failing);
        this.health = health ?? null;
      },
      stop: async () => {
        this.stops += 1;
      },
      typing: async (conversation) => {
        this.typed.push(conversation);
      },
    };
  }
}

function harness(options: { random?: () => number } = {}) {
  const timer = new ManualTimer();
  const logger = new RecordingLogger();
  const metrics = new RecordingMetrics();
  const platforms = {
    slack: new ScriptedPlatform('slack'),
    telegram: new ScriptedPlatform('telegram'),
    discord: new ScriptedPlatform('discord'),
  };
  const recipes: ReceiverRecipe[] = Object.values(platforms).map((platform) => ({
    platform: platform.platform,
    pushed: platform.platform === 'slack',
    make: async () => platform.source(),
  }));
  const changes: ChatReceiverStatus[][] = [];
  const receivers = new ChatReceivers({
    recipes,
    deliver: async () => undefined,
    timer,
    clock: new ManualClock(new Date('2026-06-01T09:00:00Z')),
    logger,
    metrics,
    random: options.random ?? (() => 0.999),
  });
  receivers.onChange((statuses) => changes.push(statuses));
  const stateOf = (platform: string) => receivers.statuses().find((status) => status.platform === platform)?.state;
  const lines = (level: string) => logger.entries.filter((entry) => entry.level === level).map((entry) => entry.message);
  return { timer, logger, metrics, platforms, receivers, changes, stateOf, lines };
}

describe('ChatReceivers: each chat receiver stands alone', () => {
  it('starts Telegram and Discord while Slack cannot start, and says which are up', async () => {
    const h = harness();
    h.platforms.slack.failing = 'The Slack receiver cannot start: auth.test failed (ECONNREFUSED).';

    await h.receivers.startPushed();
    await h.receivers.startPulling();

    expect(h.receivers.statuses().map((status) => [status.platform, status.state, status.error])).toEqual([
      ['slack', 'down', 'The Slack receiver cannot start: auth.test failed (ECONNREFUSED).'],
      ['telegram', 'up', null],
      ['discord', 'up', null],
    ]);
    expect([...h.metrics.chatReceivers]).toEqual([
      ['slack', false],
      ['telegram', true],
      ['discord', true],
    ]);
    expect(h.lines('warn')).toEqual([
      'chat: the slack receiver cannot start (The Slack receiver cannot start: auth.test failed (ECONNREFUSED)); trying again, at most 60 s apart',
    ]);
    await h.receivers.stop();
  });

  it('tries a receiver that cannot start again after growing pauses, never more than 60 s apart, logging the outage once and its end once', async () => {
    const h = harness();
    h.platforms.slack.failing = 'auth.test failed (HTTP 503)';
    await h.receivers.startPushed();
    expect(h.platforms.slack.starts).toBe(1);

    // The first pause is a second: not tried before it is over.
    h.timer.advance(999);
    await settled();
    expect(h.platforms.slack.starts).toBe(1);
    h.timer.advance(1);
    await settled();
    expect(h.platforms.slack.starts).toBe(2);

    // Pauses grow, but 60 s always bring the next try, however long the outage.
    for (let tries = 3; tries <= 15; tries += 1) {
      h.timer.advance(RECEIVER_RETRY_MAX_MS);
      await settled();
      expect(h.platforms.slack.starts).toBe(tries);
    }
    expect(h.stateOf('slack')).toBe('down');
    expect(h.lines('warn')).toHaveLength(1);
    expect(h.lines('info')).toEqual([]);

    h.platforms.slack.failing = null;
    h.timer.advance(RECEIVER_RETRY_MAX_MS);
    await settled();

    expect(h.stateOf('slack')).toBe('up');
    expect(h.metrics.chatReceivers.get('slack')).toBe(true);
    expect(h.lines('warn')).toHaveLength(1);
    expect(h.lines('info')).toEqual([expect.stringMatching(/^chat: the slack receiver is up again after \d+ s \(15 failed attempts\)$/)]);
    // Up, it is not tried again.
    h.timer.advance(10 * RECEIVER_RETRY_MAX_MS);
    await settled();
    expect(h.platforms.slack.starts).toBe(16);
    await h.receivers.stop();
  });

  it('waits doubling pauses from 1 s to at most 60 s, jittered in their upper half', () => {
    const ceilings = [1, 2, 4, 8, 16, 32, 60, 60, 60].map((seconds) => seconds * 1000);
    for (const [index, ceiling] of ceilings.entries()) {
      expect(receiverRetryDelayMs(index + 1, 0)).toBe(ceiling / 2);
      expect(receiverRetryDelayMs(index + 1, 0.9999999)).toBe(ceiling);
    }
    expect(receiverRetryDelayMs(1_000, 0.9999999)).toBe(RECEIVER_RETRY_MAX_MS);
  });

  it('asks the timer for pauses no longer than 60 s whatever the jitter', async () => {
    const timer = new RecordingTimer();
    const platform = new ScriptedPlatform('slack');
    platform.failing = 'down';
    let starts = 0;
    const receivers = new ChatReceivers({
      recipes: [
        {
          platform: 'slack',
          pushed: true,
          make: async () => (++starts > 30 ? ((platform.failing = null), platform.source()) : platform.source()),
        },
      ],
      deliver: async () => undefined,
      timer,
      clock: new ManualClock(new Date('2026-06-01T09:00:00Z')),
      logger: new RecordingLogger(),
      metrics: new RecordingMetrics(),
      random: Math.random,
    });
    await receivers.startPushed();
    await settled();
    for (let i = 0; i < 20 && receivers.statuses()[0]!.state !== 'up'; i += 1) await settled();

    expect(receivers.statuses()[0]!.state).toBe('up');
    expect(timer.waits).toHaveLength(30);
    expect(Math.max(...timer.waits)).toBeLessThanOrEqual(RECEIVER_RETRY_MAX_MS);
    expect(timer.waits.slice(-5).every((ms) => ms >= RECEIVER_RETRY_MAX_MS / 2)).toBe(true);
    await receivers.stop();
  });

  it('starts a receiver that stopped for good while running again, with one line when it stops and one when it is back', async () => {
    const h = harness();
    await h.receivers.startPushed();
    await h.receivers.startPulling();
    const telegram = h.platforms.telegram;

    telegram.failing = 'telegram refused the bot token (HTTP 401: Unauthorized)';
    telegram.health!.ended('telegram refused the bot token (HTTP 401: Unauthorized)');
    await settled();
    expect(h.stateOf('telegram')).toBe('down');
    expect(telegram.stops).toBe(1);
    for (let i = 0; i < 4; i += 1) {
      h.timer.advance(RECEIVER_RETRY_MAX_MS);
      await settled();
    }
    expect(telegram.starts).toBe(5);
    telegram.failing = null;
    h.timer.advance(RECEIVER_RETRY_MAX_MS);
    await settled();

    expect(h.stateOf('telegram')).toBe('up');
    expect(h.lines('warn')).toEqual([
      'chat: the telegram receiver stopped (telegram refused the bot token (HTTP 401: Unauthorized)); starting it again, at most 60 s apart',
    ]);
    expect(h.lines('info')).toEqual([expect.stringMatching(/^chat: the telegram receiver is up again after \d+ s \(5 failed attempts\)$/)]);
    // The others never noticed.
    expect([h.platforms.slack.starts, h.platforms.discord.starts]).toEqual([1, 1]);
    expect([h.stateOf('slack'), h.stateOf('discord')]).toEqual(['up', 'up']);
    await h.receivers.stop();
  });

  it('shows an outage the source rides out itself, without logging it again', async () => {
    const h = harness();
    await h.receivers.startPulling();
    const discord = h.platforms.discord;

    discord.health!.down('the Discord gateway connection is down (ECONNRESET)');
    expect(h.receivers.statuses().find((status) => status.platform === 'discord')).toMatchObject({
      state: 'down',
      error: 'the Discord gateway connection is down (ECONNRESET)',
    });
    expect(h.metrics.chatReceivers.get('discord')).toBe(false);
    discord.health!.up();

    expect(h.stateOf('discord')).toBe('up');
    expect(h.metrics.chatReceivers.get('discord')).toBe(true);
    expect(discord.starts).toBe(1);
    expect(h.logger.entries).toEqual([]);
    await h.receivers.stop();
  });

  it('stands the pulling receivers by when the receiving role goes, and stops trying to start them', async () => {
    const h = harness();
    h.platforms.discord.failing = 'Discord could not be reached';
    await h.receivers.startPushed();
    expect([h.stateOf('telegram'), h.stateOf('discord')]).toEqual(['standby', 'standby']);
    await h.receivers.startPulling();
    expect([h.stateOf('telegram'), h.stateOf('discord')]).toEqual(['up', 'down']);

    await h.receivers.stopPulling();
    h.timer.advance(10 * RECEIVER_RETRY_MAX_MS);
    await settled();

    expect([h.stateOf('slack'), h.stateOf('telegram'), h.stateOf('discord')]).toEqual(['up', 'standby', 'standby']);
    expect(h.platforms.discord.starts).toBe(1);
    expect(h.platforms.telegram.stops).toBe(1);
    expect(h.timer.pending).toBe(0);
    expect(h.metrics.chatReceivers.get('telegram')).toBe(false);
    // Taken again: started afresh.
    h.platforms.discord.failing = null;
    await h.receivers.startPulling();
    expect([h.stateOf('telegram'), h.stateOf('discord')]).toEqual(['up', 'up']);
    await h.receivers.stop();
  });

  it('stops without waiting for a start still under way, and stops that source once its start ends', async () => {
    let finishStart: () => void = () => undefined;
    let stops = 0;
    const slow: InboundChatSource = {
      platform: 'slack',
      start: () => new Promise<void>((resolve) => (finishStart = resolve)),
      stop: async () => {
        stops += 1;
      },
      typing: async () => undefined,
    };
    const receivers = new ChatReceivers({
      recipes: [{ platform: 'slack', pushed: true, make: async () => slow }],
      deliver: async () => undefined,
      timer: new ManualTimer(),
      clock: new ManualClock(new Date('2026-06-01T09:00:00Z')),
      logger: new RecordingLogger(),
      metrics: new RecordingMetrics(),
    });
    void receivers.startPushed();
    await settled();

    await receivers.stop();
    const stopsAtStop = stops;
    finishStart();
    await settled();

    expect(stopsAtStop).toBeGreaterThanOrEqual(1);
    expect(stops).toBe(stopsAtStop + 1);
    expect(receivers.statuses()[0]!.state).not.toBe('up');
  });

  it('shows typing through the source running now, and tells each change of state', async () => {
    const h = harness();
    await h.receivers.startPushed();
    await h.receivers.startPulling();
    const conversation = { platform: 'telegram', chatId: '1', threadId: null };

    await h.receivers.typing().get('telegram')!(conversation);

    expect(h.platforms.telegram.typed).toEqual([conversation]);
    expect(h.changes.at(-1)!.map((status) => status.state)).toEqual(['up', 'up', 'up']);
    await h.receivers.stop();
    expect(h.timer.pending).toBe(0);
  });
});
