import type { AgentConfig, WebhookExtraConfig } from '../../../src/adapters/config/AgentConfig.js';
import {
  isLoopbackHost,
  localWebhookUrl,
  openMetricsProblem,
  webhookListenerAddress,
  webhookListenerEnabled,
  webhookListenerSettingsFrom,
  webhookMetricsSettings,
  webhookOutputRetention,
  webhookWorkerSettingsFrom,
} from '../../../src/adapters/config/webhookSettings.js';

// The values themselves are checked when config.yaml is loaded (YamlConfigLoader.test.ts).
const withExtra = (extra?: WebhookExtraConfig): Pick<AgentConfig, 'platforms'> => ({
  platforms: extra === undefined ? {} : { webhook: { extra } },
});
const cron = { idleTimeoutMs: 600_000, defaultModel: { provider: 'command', model: null } };

describe('webhook listener settings', () => {
  it('listens on 0.0.0.0:8644 unless extra.host and extra.port say otherwise', () => {
    expect(webhookListenerAddress(withExtra())).toEqual({ host: '0.0.0.0', port: 8644 });
    expect(webhookListenerAddress(withExtra({ host: '127.0.0.1', port: 9000 }))).toEqual({ host: '127.0.0.1', port: 9000 });
  });

  it('takes 30 requests a minute per route and bodies up to 1 MiB unless extra.rate_limit and extra.max_body_bytes say otherwise', () => {
    expect(webhookListenerSettingsFrom(withExtra())).toMatchObject({ rateLimitPerMinute: 30, maxBodyBytes: 1_048_576 });
    expect(webhookListenerSettingsFrom(withExtra({ rate_limit: 5, max_body_bytes: 100 }))).toMatchObject({
      rateLimitPerMinute: 5,
      maxBodyBytes: 100,
    });
  });

  it('serves no metrics, and asks no token, unless extra.metrics and extra.metrics_token say otherwise', () => {
    expect(webhookMetricsSettings(withExtra())).toEqual({ enabled: false, token: null });
    expect(webhookMetricsSettings(withExtra({ metrics: true, metrics_token: 'scrape-me' }))).toEqual({ enabled: true, token: 'scrape-me' });
  });

  describe('metrics without a token', () => {
    it.each([undefined, '0.0.0.0', '::', '192.168.1.20', 'agent.internal', '128.0.0.1'])(
      'are refused on host %s, in one sentence naming both keys and what to do',
      (host) => {
        const problem = openMetricsProblem(withExtra({ metrics: true, ...(host === undefined ? {} : { host }) }), 'config.yaml');

        expect(problem).toBe(
          'config.yaml: platforms.webhook.extra.metrics is true without platforms.webhook.extra.metrics_token, which is refused unless the listener ' +
            `is bound to a loopback address (platforms.webhook.extra.host is ${host ?? '0.0.0.0'}); set platforms.webhook.extra.metrics_token, ` +
            'or bind the listener to a loopback host by setting platforms.webhook.extra.host to 127.0.0.1.',
        );
      },
    );

    it.each(['127.0.0.1', '127.10.0.3', '::1', '[::1]', 'localhost', 'LOCALHOST'])('are taken on the loopback host %s', (host) => {
      expect(openMetricsProblem(withExtra({ metrics: true, host }), 'config.yaml')).toBeNull();
    });

    it('are no problem with a token on any host, nor with metrics off', () => {
      expect(openMetricsProblem(withExtra({ metrics: true, metrics_token: 'scrape-me' }), 'config.yaml')).toBeNull();
      expect(openMetricsProblem(withExtra({ metrics: false }), 'config.yaml')).toBeNull();
      expect(openMetricsProblem(withExtra(), 'config.yaml')).toBeNull();
    });
  });

  it('runs 4 events of a command agent at once unless extra.max_concurrent_runs says otherwise, with the agent settings of cron runs', () => {
    const commandAgent = { ...withExtra(), model: { provider: 'command', command: ['my-agent'] }, providers: {} };
    expect(webhookWorkerSettingsFrom(commandAgent, cron)).toMatchObject({ maxConcurrentRuns: 4, maxConcurrentDeliveries: 2, ...cron });
    expect(webhookWorkerSettingsFrom({ ...commandAgent, ...withExtra({ max_concurrent_runs: 2 }) }, cron).maxConcurrentRuns).toBe(2);
  });

  it('runs as many events of a model session at once as agent.max_concurrent_sessions allows (64), unless max_concurrent_runs says otherwise', () => {
    const sessions = { ...withExtra(), model: { provider: 'openai', name: 'gpt-4o-mini' }, providers: {} };
    expect(webhookWorkerSettingsFrom(sessions, cron).maxConcurrentRuns).toBe(64);
    expect(webhookWorkerSettingsFrom({ ...sessions, agent: { max_concurrent_sessions: 500 } }, cron).maxConcurrentRuns).toBe(500);
    expect(webhookWorkerSettingsFrom({ ...sessions, ...withExtra({ max_concurrent_runs: 3 }) }, cron).maxConcurrentRuns).toBe(3);
    const local = { ...sessions, model: { provider: 'local' }, providers: { local: { type: 'anthropic' as const } } };
    expect(webhookWorkerSettingsFrom(local, cron).maxConcurrentRuns).toBe(64);
  });

  it('keeps 50 webhook run records per route unless extra.output_retention says otherwise', () => {
    expect(webhookOutputRetention(withExtra())).toBe(50);
    expect(webhookOutputRetention(withExtra({ output_retention: 3 }))).toBe(3);
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
