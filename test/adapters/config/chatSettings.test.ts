import { describe, expect, it } from '@jest/globals';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { chatSettingsFrom } from '../../../src/adapters/config/chatSettings.js';

const config = (platforms: Record<string, unknown>, chat?: AgentConfig['chat']): AgentConfig =>
  ({ platforms, chat, cron: {}, gateway: {}, providers: {}, fallback_providers: [] }) as unknown as AgentConfig;

describe('chatSettingsFrom', () => {
  it('reads who may talk to the bot from config.yaml, numbers as ids, with the defaults for turns', () => {
    const { settings, problems } = chatSettingsFrom(
      config({ telegram: { bot_token: 't', inbound: true, allowed_users: [111, '222'], toolsets: ['web'] } }),
      {},
    );

    expect(problems).toEqual([]);
    expect(settings.historyTurns).toBe(20);
    expect(settings.maxConcurrentTurns).toBe(4);
    expect(settings.platforms.telegram).toEqual({ allowedUsers: new Set(['111', '222']), toolsets: ['web'] });
  });

  it('lets the environment switch receiving on and name the users, comma-separated', () => {
    const { settings, problems } = chatSettingsFrom(config({}, { history_turns: 5, max_concurrent_turns: 2 }), {
      DISCORD_BOT_TOKEN: 'd',
      DISCORD_INBOUND: 'true',
      DISCORD_ALLOWED_USERS: ' 1, 2 ,',
    });

    expect(problems).toEqual([]);
    expect(settings).toMatchObject({ historyTurns: 5, maxConcurrentTurns: 2 });
    expect(settings.platforms.discord?.allowedUsers).toEqual(new Set(['1', '2']));
  });

  it('answers anyone only when allow_all_users says so', () => {
    const closed = chatSettingsFrom(config({ telegram: { bot_token: 't', inbound: true } }), {});
    const open = chatSettingsFrom(config({ telegram: { bot_token: 't', inbound: true, allow_all_users: true } }), {});

    expect(closed.settings.platforms).toEqual({});
    expect(closed.problems.map((problem) => problem.message)).toEqual([
      'platforms.telegram.inbound is on but nobody may talk to the bot: list their telegram user ids in platforms.telegram.allowed_users (or TELEGRAM_ALLOWED_USERS, comma-separated), or set platforms.telegram.allow_all_users: true to answer anyone.',
    ]);
    expect(open.problems).toEqual([]);
    expect(open.settings.platforms.telegram?.allowedUsers).toBeNull();
  });

  it('refuses a platform that cannot receive, a missing credential, Slack without the listener, and lists that are not lists', () => {
    const { problems } = chatSettingsFrom(
      config({
        matrix: { inbound: true },
        discord: { inbound: true, allow_all_users: true },
        slack: { bot_token: 'x', signing_secret: 's', inbound: true, allow_all_users: true },
        telegram: { bot_token: 't', inbound: true, allowed_users: 'me' },
      }),
      {},
    );

    expect(problems.map((problem) => problem.key).sort()).toEqual([
      'platforms.discord.bot_token',
      'platforms.matrix.inbound',
      'platforms.slack.inbound',
      'platforms.telegram.allowed_users',
    ]);
  });

  it('leaves a platform without inbound alone, whatever else it has', () => {
    expect(chatSettingsFrom(config({ telegram: { bot_token: 't', allowed_users: 'not a list' } }), {})).toEqual({
      settings: { historyTurns: 20, maxConcurrentTurns: 4, platforms: {} },
      problems: [],
    });
  });
});
