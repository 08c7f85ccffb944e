import { FakeBlueBubblesServer } from '../support/platforms/FakeBlueBubblesServer.js';
import { FakeDingTalkServer } from '../support/platforms/FakeDingTalkServer.js';
import { FakeDiscordServer } from '../support/platforms/FakeDiscordServer.js';
import { FakeFeishuServer } from '../support/platforms/FakeFeishuServer.js';
import { FakeHomeAssistantServer } from '../support/platforms/FakeHomeAssistantServer.js';
import { FakeMatrixServer } from '../support/platforms/FakeMatrixServer.js';
import { FakeMattermostServer } from '../support/platforms/FakeMattermostServer.js';
import type { FakePlatformServer } from '../support/platforms/FakePlatformServer.js';
import { FakeQqBotServer } from '../support/platforms/FakeQqBotServer.js';
import { FakeSignalCliServer } from '../support/platforms/FakeSignalCliServer.js';
import { FakeSlackServer } from '../support/platforms/FakeSlackServer.js';
import { FakeSmtpServer } from '../support/platforms/FakeSmtpServer.js';
import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';
import { FakeTwilioServer } from '../support/platforms/FakeTwilioServer.js';
import { FakeWecomServer } from '../support/platforms/FakeWecomServer.js';
import { FakeWeixinServer } from '../support/platforms/FakeWeixinServer.js';
import { FakeWhatsAppServer } from '../support/platforms/FakeWhatsAppServer.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent } from './agentCli.js';

interface PlatformCase {
  platform: string;
  /** Starts the platform's local stand-in, as its contract test does. */
  start: () => Promise<FakePlatformServer>;
  /**
   * The message id `agent send` prints: the one the platform confirmed with. Where the platform
   * confirms without an id (Home Assistant, a WeCom group chat, an iLink reply without one) the
   * part's own key stands in; for e-mail it is the Message-ID of the mail the server accepted.
   */
  messageId: string | RegExp;
  /** The chat `agent send` names, when it is not the whole home channel. */
  chat?: string;
}

const PLATFORMS: readonly PlatformCase[] = [
  // The home channel is a chat and a topic in it; the confirmation names the chat.
  { platform: 'telegram', start: () => FakeTelegramServer.start(), messageId: '1', chat: '-1001234567890' },
  { platform: 'discord', start: () => FakeDiscordServer.start(), messageId: '1300000000000000001' },
  { platform: 'slack', start: () => FakeSlackServer.start(), messageId: '1712345679.000100' },
  { platform: 'mattermost', start: () => FakeMattermostServer.start(), messageId: 'p0000000000000000000000001' },
  { platform: 'matrix', start: () => FakeMatrixServer.start(), messageId: '$event1' },
  { platform: 'email', start: () => FakeSmtpServer.start(), messageId: /^<agent\.[0-9a-f]+\.1@example\.com>$/ },
  { platform: 'sms', start: () => FakeTwilioServer.start(), messageId: 'SM00000000000000000000000000000001' },
  { platform: 'signal', start: () => FakeSignalCliServer.start(), messageId: '1750000000001' },
  { platform: 'whatsapp', start: () => FakeWhatsAppServer.start(), messageId: 'wamid.HBgLMTQxNTU1NTAxMjMVAgARGBI000001AA==' },
  { platform: 'feishu', start: () => FakeFeishuServer.start(), messageId: 'om_000000000000000000000001' },
  { platform: 'dingtalk', start: () => FakeDingTalkServer.start('open_api'), messageId: 'pqk000001/OgXq1ldG0FzEh7kYLH0ZnA==' },
  { platform: 'homeassistant', start: () => FakeHomeAssistantServer.start(), messageId: /^[0-9a-f]+\.1$/ },
  { platform: 'weixin', start: () => FakeWeixinServer.start(), messageId: /^agent-[0-9a-f]+\.1$/ },
  { platform: 'bluebubbles', start: () => FakeBlueBubblesServer.start(), messageId: 'p:0/5F0C7A2E-0000-4000-8000-000000000001' },
  { platform: 'wecom', start: () => FakeWecomServer.start(), messageId: /^[0-9a-f]+\.1$/ },
  { platform: 'qqbot', start: () => FakeQqBotServer.start(), messageId: 'ROBOT1.0_fakeMessage1' },
];

function platformSection(platform: string, settings: Record<string, string>): string {
  return ['platforms:', `  ${platform}:`, ...Object.entries(settings).map(([key, value]) => `    ${key}: ${JSON.stringify(value)}`)].join(
    '\n',
  );
}

/**
 * Every platform's sender is loaded by a dynamic import, which the bundle turns into a chunk of
 * its own. A chunk that only breaks once bundled (a CommonJS dependency whose named exports
 * vanish, a missing file) would pass every test over the sources, so each platform delivers
 * once through dist/agent.js here.
 */
describe('agent send through the built executable, every platform', () => {
  let fake: FakePlatformServer | undefined;
  let home: string | undefined;

  beforeAll(requireBuiltAgent);

  afterEach(async () => {
    await fake?.close();
    if (home !== undefined) await removeAgentHome(home);
    fake = undefined;
    home = undefined;
  });

  it('covers every platform the catalog loads', async () => {
    const { PLATFORM_SPECS } = await import('../../src/adapters/delivery/platformCatalog.js');
    expect(PLATFORMS.map(({ platform }) => platform).sort()).toEqual(Object.keys(PLATFORM_SPECS).sort());
  });

  test.each(PLATFORMS)(
    'agent send $platform delivers to its home channel and prints what the platform confirmed',
    async ({ platform, start, messageId, chat }) => {
      fake = await start();
      home = await makeAgentHome({ extraConfig: platformSection(platform, fake.settings) });

      const run = await runAgent(['send', platform, 'hello from the bundle'], { home });

      expect(run).toMatchObject({ code: 0, stderr: '' });
      const confirmed = /^Delivered to (\S+) \((.+)\): message (\S+)\.\n$/.exec(run.stdout);
      expect(confirmed?.slice(1)).toEqual([
        platform,
        chat ?? fake.settings.home_channel,
        typeof messageId === 'string' ? messageId : expect.stringMatching(messageId),
      ]);
      expect(fake.delivered).toEqual(['hello from the bundle']);
    },
  );
});
