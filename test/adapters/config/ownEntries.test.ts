import { describe, expect, it } from '@jest/globals';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { chatSettingsFrom } from '../../../src/adapters/config/chatSettings.js';
import { readConfiguredRoutes } from '../../../src/adapters/config/webhookRouteConfig.js';
import { ConfiguredPlatforms } from '../../../src/adapters/delivery/ConfiguredPlatforms.js';
import { changesJobs } from '../../../src/adapters/cli/cronRunGuard.js';
import { parseDeliveryTargets } from '../../../src/domain/DeliveryTarget.js';
import { parseSchedule } from '../../../src/domain/Schedule.js';
import { cronRunToolsets, isKnownToolset, KNOWN_TOOLSETS, toolsInToolsets } from '../../../src/domain/toolsets.js';

/** Names every plain object answers to through its prototype. */
const PROTOTYPE_NAMES = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];

const KNOWN_LIST =
  'the known ones are cronjob, terminal, web, web_search, web_extract, clarify, vision, agent-cron, agent-chat, agent-webhook';

const config = (platforms: Record<string, unknown>): AgentConfig =>
  ({ platforms, cron: {}, gateway: {}, providers: {}, fallback_providers: [] }) as unknown as AgentConfig;

/** `{ [name]: value }` as an own property, `__proto__` too (as a YAML or JSON reader makes it). */
const own = (name: string, value: unknown): Record<string, unknown> =>
  Object.defineProperty({}, name, { value, enumerable: true, writable: true, configurable: true });

describe('names a user writes are looked up as own entries, never through the prototype', () => {
  it("knows every toolset and preset, and none of the prototype's names", () => {
    expect(KNOWN_TOOLSETS).toEqual([
      'cronjob',
      'terminal',
      'web',
      'web_search',
      'web_extract',
      'clarify',
      'vision',
      'agent-cron',
      'agent-chat',
      'agent-webhook',
    ]);
    for (const name of KNOWN_TOOLSETS) expect(isKnownToolset(name)).toBe(true);
    for (const name of PROTOTYPE_NAMES) expect(isKnownToolset(name)).toBe(false);
  });

  it('expands a prototype name to no tools, and a cron run with one to no job tool, without throwing', () => {
    expect(toolsInToolsets(PROTOTYPE_NAMES)).toEqual([]);
    expect(toolsInToolsets(['toString', 'web'])).toEqual(['web_search', 'web_extract']);
    expect(cronRunToolsets(['constructor', 'agent-chat'])).toEqual(['constructor', 'terminal', 'web', 'vision', 'clarify']);
  });

  it.each(PROTOTYPE_NAMES)('refuses a webhook route whose toolsets name %s, listing the known ones', (name) => {
    const { routes, problems } = readConfiguredRoutes(
      { routes: { r: { secret: 's3cret', toolsets: [name, 'web'] } } },
      true,
      'config.yaml',
    );
    expect(routes).toEqual([]);
    expect(problems).toEqual([
      `config.yaml: platforms.webhook.extra.routes.r.toolsets names an unknown toolset ${JSON.stringify(name)}; ${KNOWN_LIST}.`,
    ]);
  });

  it.each(PROTOTYPE_NAMES)('refuses platforms.<name>.toolsets naming %s, receiving or not, listing the known ones', (name) => {
    const receiving = chatSettingsFrom(
      config({ telegram: { bot_token: 't', inbound: true, allow_all_users: true, toolsets: [name] } }),
      {},
    );
    const idle = chatSettingsFrom(config({ discord: { toolsets: ['web', name] } }), {});

    expect(receiving.problems).toEqual([
      {
        key: 'platforms.telegram.toolsets',
        message: `platforms.telegram.toolsets names an unknown toolset ${JSON.stringify(name)}; ${KNOWN_LIST}.`,
      },
    ]);
    expect(receiving.settings.platforms).toEqual({});
    expect(idle.problems).toEqual([
      {
        key: 'platforms.discord.toolsets',
        message: `platforms.discord.toolsets names an unknown toolset ${JSON.stringify(name)}; ${KNOWN_LIST}.`,
      },
    ]);
  });

  it('still takes known toolsets on a chat platform', () => {
    const { settings, problems } = chatSettingsFrom(
      config({ telegram: { bot_token: 't', inbound: true, allow_all_users: true, toolsets: ['web', 'agent-webhook'] } }),
      {},
    );
    expect(problems).toEqual([]);
    expect(settings.platforms.telegram?.toolsets).toEqual(['web', 'agent-webhook']);
  });

  it.each(['constructor', '__proto__', 'hasownproperty', 'tostring'])(
    'refuses the delivery target %s as an unknown platform, listing the known ones',
    (name) => {
      expect(() => parseDeliveryTargets(name)).toThrow(
        new RegExp(`names an unknown platform "${name}"; use local, origin, all, bot-chat or one of: telegram, discord, slack`),
      );
      expect(() => parseDeliveryTargets(`${name}:123`)).toThrow(/names an unknown platform/);
    },
  );

  it.each(PROTOTYPE_NAMES)('refuses a webhook route delivering to %s, listing the deliveries there are', (name) => {
    const { problems } = readConfiguredRoutes({ routes: { r: { secret: 's3cret', deliver: name } } }, true, 'config.yaml');
    expect(problems).toEqual([
      expect.stringMatching(new RegExp(`routes\\.r\\.deliver must be one of log, repo_comment, telegram, .* \\(got "${name}"\\)`)),
    ]);
  });

  it.each(['constructor', '__proto__'])('refuses a config.yaml route named %s only where no route can have the name', (name) => {
    const { routes, problems } = readConfiguredRoutes({ routes: own(name, { secret: 's3cret' }) }, true, 'config.yaml');
    if (name === '__proto__') {
      expect(problems).toEqual([expect.stringContaining('has the key "__proto__", which is not a usable route name')]);
      expect(routes).toEqual([]);
    } else {
      // A plain word is a name like any other: served as its own route, nothing inherited.
      expect(problems).toEqual([]);
      expect(routes.map((route) => route.name)).toEqual(['constructor']);
    }
  });

  it.each(PROTOTYPE_NAMES)('knows no platform %s, and sends nothing there', async (name) => {
    const platforms = new ConfiguredPlatforms(own(name, { bot_token: 'x' }), {});
    expect(platforms.status(name)).toBeNull();
    expect(platforms.addressProblem(name, { chatId: '1', threadId: null })).toBeNull();
    await expect(platforms.sender(name)).rejects.toThrow(`Delivery platform "${name}" is not configured on this host.`);
    expect(platforms.statuses().map((status) => status.platform)).not.toContain(name);
  });

  it('reads no platform setting through the prototype', () => {
    const status = new ConfiguredPlatforms({ telegram: {} }, {}).status('telegram')!;
    expect(status.configured).toBe(false);
    expect(status.homeChannel).toBeNull();
  });

  it('treats a command group named like a prototype member as one that changes nothing', () => {
    for (const name of PROTOTYPE_NAMES) expect(changesJobs(name, 'create')).toBe(false);
  });

  it('refuses a cron macro named like a prototype member', () => {
    expect(() => parseSchedule('@constructor', new Date('2026-01-01T00:00:00Z'), 'UTC')).toThrow(/"@constructor" is not a cron macro/);
  });
});
