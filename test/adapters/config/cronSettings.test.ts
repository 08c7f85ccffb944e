import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { cronSettingsFrom, idleTimeoutMsFrom, resolveTimeZone, scriptTimeoutMsFrom } from '../../../src/adapters/config/cronSettings.js';
import { displayPath } from '../../../src/adapters/shared/displayPath.js';

function configWith(overrides: Partial<AgentConfig> = {}, cron: Partial<AgentConfig['cron']> = {}): AgentConfig {
  return {
    providers: {},
    fallback_providers: [],
    platforms: {},
    gateway: { shutdown_grace_seconds: 30 },
    ...overrides,
    cron: { wrap_response: true, max_parallel_jobs: 4, output_retention: 50, bot_chat_delivery_timeout_seconds: 600, ...cron },
  };
}

describe('resolveTimeZone', () => {
  it('uses timezone from the config', () => {
    expect(resolveTimeZone(configWith({ timezone: 'Asia/Tokyo' }), {})).toBe('Asia/Tokyo');
  });

  it('lets AGENT_TIMEZONE override the config', () => {
    expect(resolveTimeZone(configWith({ timezone: 'Asia/Tokyo' }), { AGENT_TIMEZONE: 'America/New_York' })).toBe('America/New_York');
  });

  it('falls back to the system zone when neither is set', () => {
    expect(resolveTimeZone(configWith(), {})).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });

  it('refuses an invalid zone instead of falling back', () => {
    expect(() => resolveTimeZone(configWith({ timezone: 'UTC' }), { AGENT_TIMEZONE: 'Mars/Olympus' })).toThrow(
      expect.objectContaining({ code: 'TIMEZONE.INVALID', message: expect.stringContaining('"Mars/Olympus"') }),
    );
    expect(() => resolveTimeZone(configWith({ timezone: 'Nowhere' }), {})).toThrow(expect.objectContaining({ code: 'TIMEZONE.INVALID' }));
  });
});

describe('resolveTimeZone with TZ, the system zone', () => {
  it('reads the zone TZ names, with or without a leading colon', () => {
    expect(resolveTimeZone(configWith(), { TZ: 'Asia/Tokyo' })).toBe('Asia/Tokyo');
    expect(resolveTimeZone(configWith(), { TZ: ':Asia/Tokyo' })).toBe('Asia/Tokyo');
  });

  it('reads an empty TZ as UTC, as POSIX does', () => {
    expect(resolveTimeZone(configWith(), { TZ: '' })).toBe('UTC');
    expect(resolveTimeZone(configWith(), { TZ: ' ' })).toBe('UTC');
  });

  it('refuses a TZ that names no zone, naming TZ, instead of falling back to UTC', () => {
    for (const written of ['Foo/Bar', ':Foo/Bar', '<+03>-3', 'GMT+3']) {
      expect(() => resolveTimeZone(configWith(), { TZ: written })).toThrow(
        expect.objectContaining({
          code: 'TIMEZONE.INVALID',
          message: expect.stringMatching(/^TZ: ".*" is not a valid time zone; use an IANA name such as "Europe\/Berlin" or "UTC"\.$/),
        }),
      );
    }
  });

  it('reads the zone of a zone file TZ points at by its place under zoneinfo', () => {
    const root = mkdtempSync(join(tmpdir(), 'tz-'));
    try {
      mkdirSync(join(root, 'zoneinfo', 'Asia'), { recursive: true });
      writeFileSync(join(root, 'zoneinfo', 'Asia', 'Tokyo'), 'TZif');
      symlinkSync(join(root, 'zoneinfo', 'Asia', 'Tokyo'), join(root, 'localtime'));
      writeFileSync(join(root, 'copied-localtime'), 'TZif');

      expect(resolveTimeZone(configWith(), { TZ: join(root, 'zoneinfo', 'Asia', 'Tokyo') })).toBe('Asia/Tokyo');
      expect(resolveTimeZone(configWith(), { TZ: `:${join(root, 'localtime')}` })).toBe('Asia/Tokyo');
      expect(() => resolveTimeZone(configWith(), { TZ: `:${join(root, 'copied-localtime')}` })).toThrow(
        /^TZ: ".*copied-localtime" is not a valid time zone/,
      );
      expect(() => resolveTimeZone(configWith(), { TZ: join(root, 'missing') })).toThrow(/^TZ: /);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('consults TZ only when neither AGENT_TIMEZONE nor timezone is set', () => {
    expect(resolveTimeZone(configWith({ timezone: 'Asia/Tokyo' }), { TZ: 'Foo/Bar' })).toBe('Asia/Tokyo');
    expect(resolveTimeZone(configWith(), { AGENT_TIMEZONE: 'Europe/Paris', TZ: '' })).toBe('Europe/Paris');
    expect(() => resolveTimeZone(configWith({ timezone: 'Nowhere' }), { TZ: 'Asia/Tokyo' })).toThrow(/timezone: "Nowhere"/);
  });
});

describe('idleTimeoutMsFrom (AGENT_CRON_TIMEOUT)', () => {
  it('defaults to 600 s', () => {
    expect(idleTimeoutMsFrom({})).toBe(600_000);
    expect(idleTimeoutMsFrom({ AGENT_CRON_TIMEOUT: ' ' })).toBe(600_000);
  });

  it('reads seconds', () => {
    expect(idleTimeoutMsFrom({ AGENT_CRON_TIMEOUT: '90' })).toBe(90_000);
    expect(idleTimeoutMsFrom({ AGENT_CRON_TIMEOUT: '1.5' })).toBe(1_500);
  });

  it('reads 0 as no limit', () => {
    expect(idleTimeoutMsFrom({ AGENT_CRON_TIMEOUT: '0' })).toBeNull();
  });

  it.each(['ten', '-5', 'Infinity'])('refuses %s with an error naming the variable', (written) => {
    expect(() => idleTimeoutMsFrom({ AGENT_CRON_TIMEOUT: written })).toThrow(
      expect.objectContaining({ code: 'CONFIG.INVALID', message: expect.stringMatching(/^AGENT_CRON_TIMEOUT must be/) }),
    );
  });
});

describe('scriptTimeoutMsFrom', () => {
  it('prefers AGENT_CRON_SCRIPT_TIMEOUT, then cron.script_timeout_seconds, then 3600 s', () => {
    const configured = configWith({}, { script_timeout_seconds: 120 });

    expect(scriptTimeoutMsFrom(configured, { AGENT_CRON_SCRIPT_TIMEOUT: '30' })).toBe(30_000);
    expect(scriptTimeoutMsFrom(configured, {})).toBe(120_000);
    expect(scriptTimeoutMsFrom(configWith(), {})).toBe(3_600_000);
  });

  it('skips an invalid AGENT_CRON_SCRIPT_TIMEOUT with a warning and uses the next source', () => {
    const warnings: string[] = [];

    expect(scriptTimeoutMsFrom(configWith({}, { script_timeout_seconds: 120 }), { AGENT_CRON_SCRIPT_TIMEOUT: '0' }, warnings)).toBe(
      120_000,
    );
    expect(warnings).toEqual([
      'AGENT_CRON_SCRIPT_TIMEOUT must be a positive number of seconds (got "0"); it is ignored and cron.script_timeout_seconds or the default is used.',
    ]);
  });
});

describe('cronSettingsFrom', () => {
  it('runs 4 jobs at once with a command agent and agent.max_concurrent_sessions (64) with a model session, unless max_parallel_jobs says', () => {
    const command = { model: { provider: 'command', command: ['my-agent'] } };
    expect(cronSettingsFrom(configWith(command, { max_parallel_jobs: undefined }), {}).maxParallelJobs).toBe(4);
    expect(cronSettingsFrom(configWith({}, { max_parallel_jobs: undefined }), {}).maxParallelJobs).toBe(4);
    const session = { model: { provider: 'ollama', name: 'llama3.2' } };
    expect(cronSettingsFrom(configWith(session, { max_parallel_jobs: undefined }), {}).maxParallelJobs).toBe(64);
    const fewer = { ...session, agent: { max_concurrent_sessions: 10 } };
    expect(cronSettingsFrom(configWith(fewer, { max_parallel_jobs: undefined }), {}).maxParallelJobs).toBe(10);
    expect(cronSettingsFrom(configWith(session, { max_parallel_jobs: 2 }), {}).maxParallelJobs).toBe(2);
  });

  it('warns of run slots set above the sessions or the processes that bound them', () => {
    const warnings: string[] = [];
    const session = { model: { provider: 'openai', name: 'gpt-4o-mini' }, agent: { max_concurrent_sessions: 8 } };
    cronSettingsFrom(configWith(session, { max_parallel_jobs: 20 }), {}, warnings);
    expect(warnings).toEqual([
      'cron.max_parallel_jobs is 20 but agent.max_concurrent_sessions is 8: at most 8 of those runs go on at once; raise agent.max_concurrent_sessions too.',
    ]);
    const processes: string[] = [];
    const command = {
      model: { provider: 'command', command: ['my-agent'] },
      platforms: { webhook: { enabled: true, extra: { max_concurrent_runs: 40 } } },
    };
    cronSettingsFrom(configWith(command, { max_parallel_jobs: 4 }), {}, processes);
    expect(processes).toEqual([
      'platforms.webhook.extra.max_concurrent_runs is 40 but agent.max_concurrent_processes is 16: at most 16 of those runs go on at once; raise agent.max_concurrent_processes too.',
    ]);
  });

  it('gathers the cron settings from config and environment', () => {
    const config = configWith(
      { timezone: 'Europe/Berlin', model: { provider: 'command', name: 'small', command: ['a'] } },
      { wrap_response: false, max_parallel_jobs: 2, output_retention: 7, catch_up: 'skip' },
    );

    expect(cronSettingsFrom(config, { AGENT_CRON_TIMEOUT: '0' })).toEqual({
      timeZone: 'Europe/Berlin',
      wrapResponse: false,
      maxParallelJobs: 2,
      claimAheadMs: 1000,
      outputRetention: 7,
      oneShotGraceMs: 120_000,
      failureAlerts: 'first',
      pauseAfterFailures: 0,
      catchUp: 'skip',
      idleTimeoutMs: null,
      scriptTimeoutMs: 3_600_000,
      defaultModel: { provider: 'command', model: 'small' },
    });
  });

  it('has no default model when none is configured', () => {
    expect(cronSettingsFrom(configWith({ timezone: 'UTC' }), {}).defaultModel).toEqual({ provider: null, model: null });
  });
});

describe('displayPath', () => {
  it('writes the home directory as ~', () => {
    expect(displayPath('/home/ada/.agent/config.yaml', '/home/ada')).toBe('~/.agent/config.yaml');
    expect(displayPath('/home/adam/x', '/home/ada')).toBe('/home/adam/x');
  });
});
