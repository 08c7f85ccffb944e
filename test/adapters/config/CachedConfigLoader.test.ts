import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CachedConfigLoader } from '../../../src/adapters/config/CachedConfigLoader.js';
import { YamlConfigLoader } from '../../../src/adapters/config/YamlConfigLoader.js';
import { AppError } from '../../../src/domain/errors.js';

let home: string;
let configFile: string;
let cacheFile: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'agent-config-cache-'));
  configFile = join(home, 'config.yaml');
  cacheFile = CachedConfigLoader.cacheFileOf(home);
});

afterEach(() => rmSync(home, { recursive: true, force: true }));

const loader = (version = '1.0.0') => new CachedConfigLoader(configFile, cacheFile, version);

/** Replaces the cached config's time zone, key kept: a later load that returns it used the cache. */
function markCache(timezone: string): void {
  const entry = JSON.parse(readFileSync(cacheFile, 'utf8'));
  entry.loaded.config.timezone = timezone;
  writeFileSync(cacheFile, JSON.stringify(entry));
}

const RICH_CONFIG = `
timezone: Europe/Berlin
model: {provider: command, name: small, command: ["my-agent", "--quiet"]}
providers:
  cloud: {type: openai, base_url: https://api.example.com/v1, api_key_env: CLOUD_API_KEY, api_keys: [a, b]}
fallback_providers: [{provider: cloud, model: tiny}]
cron: {wrap_response: false, max_parallel_jobs: 2, script_timeout_seconds: 90, my_plugin: {nested: {x: [1, 2]}}, provider: my_plugin}
platforms:
  telegram: {token_env: TELEGRAM_TOKEN, anything: [1, 2]}
  webhook: {enabled: true, extra: {port: 9000, rate_limit: 5, routes: {gh: {secret: s, events: [push]}}}}
toolsets: [web, terminal]
memory: {enabled: true}
timezon: typo
`;

describe('CachedConfigLoader', () => {
  it('gives what the validating loader gives, warnings included, the first time and from the cache', async () => {
    writeFileSync(configFile, RICH_CONFIG);
    const fresh = new YamlConfigLoader(configFile).load();

    const first = await loader().load();
    const cached = await loader().load();

    expect(fresh.warnings).toHaveLength(1);
    expect(first).toStrictEqual(fresh);
    expect(cached).toStrictEqual(fresh);
  });

  it('reuses the result while the file is unchanged', async () => {
    writeFileSync(configFile, 'timezone: Europe/Berlin\n');
    await loader().load();
    markCache('Asia/Tokyo');

    expect((await loader().load()).config.timezone).toBe('Asia/Tokyo');
  });

  it('reads the file again once it changed, or once the program did', async () => {
    writeFileSync(configFile, 'timezone: Europe/Berlin\n');
    await loader().load();
    markCache('Asia/Tokyo');

    expect((await loader('1.0.1').load()).config.timezone).toBe('Europe/Berlin');
    writeFileSync(configFile, 'timezone: America/Chicago\n');
    expect((await loader('1.0.1').load()).config.timezone).toBe('America/Chicago');
  });

  it('never caches a file that does not load: the error comes every time, and the fix is seen', async () => {
    writeFileSync(configFile, 'timezone: Europe/Berlin\n');
    await loader().load();
    writeFileSync(configFile, 'cron: {max_parallel_jobs: four}\n');

    await expect(loader().load()).rejects.toThrow(/cron\.max_parallel_jobs/);
    await expect(loader().load()).rejects.toBeInstanceOf(AppError);
    writeFileSync(configFile, 'cron: {max_parallel_jobs: 4}\n');
    expect((await loader().load()).config.cron.max_parallel_jobs).toBe(4);
  });

  it('gives the defaults without a file, and notices a file that appears', async () => {
    expect((await loader().load()).config.timezone).toBeUndefined();
    writeFileSync(configFile, 'timezone: Europe/Berlin\n');

    expect((await loader().load()).config.timezone).toBe('Europe/Berlin');
  });

  it('keeps the cache private: the file 0600 in a 0700 directory', async () => {
    writeFileSync(configFile, 'providers: {cloud: {type: openai, api_keys: [sk-secret]}}\n');

    await loader().load();

    expect(statSync(cacheFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'cache')).mode & 0o777).toBe(0o700);
  });

  it('ignores a cache file that is damaged', async () => {
    writeFileSync(configFile, 'timezone: Europe/Berlin\n');
    mkdirSync(join(home, 'cache'));
    writeFileSync(cacheFile, '{"key": "x", "loaded": ');

    expect((await loader().load()).config.timezone).toBe('Europe/Berlin');
    expect(JSON.parse(readFileSync(cacheFile, 'utf8')).loaded.config.timezone).toBe('Europe/Berlin');
  });

  it('still loads where the cache cannot be written', async () => {
    writeFileSync(configFile, 'timezone: Europe/Berlin\n');
    writeFileSync(join(home, 'cache'), 'a file where the directory would be');

    expect((await loader().load()).config.timezone).toBe('Europe/Berlin');
  });
});
