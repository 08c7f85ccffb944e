import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forgetConfigCache } from '../../../src/adapters/config/forgetConfigCache.js';

let home: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'agent-forget-cache-'));
});

afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('forgetConfigCache', () => {
  it('deletes the copy of config.yaml an earlier version left, and its empty directory', async () => {
    mkdirSync(join(home, 'cache'));
    writeFileSync(join(home, 'cache', 'config.json'), '{"loaded":{"config":{"platforms":{"telegram":{"bot_token":"secret"}}}}}');

    await forgetConfigCache(home);

    expect(existsSync(join(home, 'cache'))).toBe(false);
  });

  it('keeps whatever else is in the directory', async () => {
    mkdirSync(join(home, 'cache'));
    writeFileSync(join(home, 'cache', 'config.json'), '{}');
    writeFileSync(join(home, 'cache', 'other'), 'kept');

    await forgetConfigCache(home);

    expect(existsSync(join(home, 'cache', 'config.json'))).toBe(false);
    expect(existsSync(join(home, 'cache', 'other'))).toBe(true);
  });

  it('creates nothing in a home without a cache, nor in one that does not exist', async () => {
    await forgetConfigCache(home);
    await forgetConfigCache(join(home, 'missing'));

    expect(existsSync(join(home, 'cache'))).toBe(false);
    expect(existsSync(join(home, 'missing'))).toBe(false);
  });
});
