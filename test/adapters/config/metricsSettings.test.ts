import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webhookMetricsSettings } from '../../../src/adapters/config/webhookSettings.js';
import { YamlConfigLoader } from '../../../src/adapters/config/YamlConfigLoader.js';

describe('platforms.webhook.extra.metrics and metrics_token', () => {
  let home: string;
  beforeEach(() => (home = mkdtempSync(join(tmpdir(), 'agent-metrics-config-'))));
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  const load = (extra: string) => {
    const file = join(home, 'config.yaml');
    writeFileSync(file, `platforms:\n  webhook:\n    enabled: true\n    extra:\n${extra}`);
    return () => new YamlConfigLoader(file).load();
  };

  it('are off, without a token, unless set', () => {
    expect(webhookMetricsSettings(load('      port: 9000\n')().config)).toEqual({ enabled: false, token: null });
    expect(webhookMetricsSettings(load('      metrics: true\n      metrics_token: " scrape-me "\n')().config)).toEqual({
      enabled: true,
      token: 'scrape-me',
    });
  });

  it('refuse a value of the wrong kind, naming the file and the key', () => {
    expect(load('      metrics: "yes"\n')).toThrow(
      `${join(home, 'config.yaml')}: platforms.webhook.extra.metrics must be true or false (got "yes").`,
    );
    expect(load('      metrics: true\n      metrics_token: ""\n')).toThrow(
      /platforms\.webhook\.extra\.metrics_token must be a non-empty string/,
    );
  });

  it('are checked when config.yaml is loaded, leaving the other listener keys as written', () => {
    expect(load('      metrics: yes-please\n')).toThrow(/platforms\.webhook\.extra\.metrics must be true or false/);
    expect(load('      metrics: true\n      metrics_token: 42\n')).toThrow(
      /platforms\.webhook\.extra\.metrics_token must be a non-empty string/,
    );
    const { config } = load('      metrics: true\n      metrics_token: scrape-me\n      port: 9000\n      routes: {}\n')();
    expect(config.platforms.webhook?.extra).toEqual({ metrics: true, metrics_token: 'scrape-me', port: 9000, routes: {} });
  });
});
