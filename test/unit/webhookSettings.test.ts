import type { AgentConfig } from '../../src/adapters/config/AgentConfig.js';
import {
  isLoopbackHost,
  localWebhookUrl,
  webhookListenerAddress,
  webhookListenerEnabled,
  webhookOutputRetention,
  webhookWorkerSettingsFrom,
} from '../../src/adapters/config/webhookSettings.js';

const withExtra = (extra?: Record<string, unknown>): Pick<AgentConfig, 'platforms'> => ({
  platforms: extra === undefined ? {} : { webhook: { extra } },
});
const cron = { idleTimeoutMs: 600_000, defaultModel: { provider: 'command', model: null } };

describe('webhook listener settings', () => {
  it('listens on 0.0.0.0:8644 unless extra.host and extra.port say otherwise', () => {
    expect(webhookListenerAddress(withExtra())).toEqual({ host: '0.0.0.0', port: 8644 });
    expect(webhookListenerAddress(withExtra({ host: '127.0.0.1', port: 9000 }))).toEqual({ host: '127.0.0.1', port: 9000 });
  });

  it('refuses a port that is not one, naming the key', () => {
    expect(() => webhookListenerAddress(withExtra({ port: 'eighty' }))).toThrow(
      'config.yaml: platforms.webhook.extra.port must be a port number from 0 to 65535 (got "eighty").',
    );
  });

  it('runs 4 events at once unless extra.max_concurrent_runs says otherwise, with the agent settings of cron runs', () => {
    expect(webhookWorkerSettingsFrom(withExtra(), cron)).toMatchObject({ maxConcurrentRuns: 4, ...cron });
    expect(webhookWorkerSettingsFrom(withExtra({ max_concurrent_runs: 2 }), cron).maxConcurrentRuns).toBe(2);
    expect(() => webhookWorkerSettingsFrom(withExtra({ max_concurrent_runs: 0 }), cron)).toThrow(/max_concurrent_runs must be a whole number of 1 or more \(got 0\)/);
  });

  it('keeps 50 webhook run records per route unless extra.output_retention says otherwise', () => {
    expect(webhookOutputRetention(withExtra())).toBe(50);
    expect(webhookOutputRetention(withExtra({ output_retention: 3 }))).toBe(3);
  });

  it.each([[0, '0'], [2.5, '2.5'], ['ten', '"ten"'], [-1, '-1']])('refuses extra.output_retention %j in one sentence naming the key', (value, shown) => {
    expect(() => webhookOutputRetention(withExtra({ output_retention: value }), '~/.agent/config.yaml')).toThrow(
      `~/.agent/config.yaml: platforms.webhook.extra.output_retention must be a whole number of 1 or more (got ${shown}).`,
    );
  });

  it('says the listener is on only when platforms.webhook.enabled is true', () => {
    expect(webhookListenerEnabled({ platforms: {} })).toBe(false);
    expect(webhookListenerEnabled({ platforms: { webhook: { enabled: false } } })).toBe(false);
    expect(webhookListenerEnabled({ platforms: { webhook: { enabled: true } } })).toBe(true);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.10', false],
    ['example.com', false],
  ])('%s is a loopback address: %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });

  it.each([
    [{ host: '0.0.0.0', port: 8644 }, 'http://127.0.0.1:8644/webhooks/payments'],
    [{ host: '::', port: 8644 }, 'http://[::1]:8644/webhooks/payments'],
    [{ host: '192.168.1.10', port: 9000 }, 'http://192.168.1.10:9000/webhooks/payments'],
    [{ host: 'fe80::1', port: 9000 }, 'http://[fe80::1]:9000/webhooks/payments'],
  ])('a route on %j is reached at %s', (address, url) => {
    expect(localWebhookUrl(address, 'payments')).toBe(url);
  });
});
