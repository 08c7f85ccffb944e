import { CredentialPool, retryAfterMs } from '../../../src/adapters/agents/CredentialPool.js';

describe('CredentialPool', () => {
  let now = 1_000_000;
  const clock = () => now;

  beforeEach(() => {
    now = 1_000_000;
  });

  it('keeps using the first key until it is rate-limited', () => {
    const pool = new CredentialPool(['k1', 'k2'], 'OPENAI_API_KEYS', clock);

    expect(pool.nextAvailable()).toEqual({ value: 'k1', position: 1 });
    expect(pool.nextAvailable()).toEqual({ value: 'k1', position: 1 });
  });

  it('skips a cooling key until its cool-down is over', () => {
    const pool = new CredentialPool(['k1', 'k2'], 'OPENAI_API_KEYS', clock);
    pool.coolDown(pool.nextAvailable()!, 30_000);

    expect(pool.nextAvailable()?.value).toBe('k2');
    now += 29_999;
    expect(pool.nextAvailable()?.value).toBe('k2');
    now += 1;
    expect(pool.nextAvailable()?.value).toBe('k1');
  });

  it('has no key while every key cools, and says when the first is free again', () => {
    const pool = new CredentialPool(['k1', 'k2'], 'OPENAI_API_KEYS', clock);
    pool.coolDown({ value: 'k1', position: 1 }, 10_000);
    pool.coolDown({ value: 'k2', position: 2 }, 5_000);

    expect(pool.nextAvailable()).toBeNull();
    expect(pool.msUntilAvailable()).toBe(5_000);
  });

  it('keeps a longer cool-down when a shorter one follows', () => {
    const pool = new CredentialPool(['k1'], 'OPENAI_API_KEY', clock);
    pool.coolDown({ value: 'k1', position: 1 }, 60_000);
    pool.coolDown({ value: 'k1', position: 1 }, 1_000);

    now += 30_000;

    expect(pool.nextAvailable()).toBeNull();
  });

  it('hides its keys in a text that quotes them', () => {
    const pool = new CredentialPool(['sk-a1', 'sk-b2'], 'OPENAI_API_KEYS', clock);

    expect(pool.redact('Incorrect API key provided: sk-b2; sk-a1 is fine')).toBe(
      'Incorrect API key provided: [key hidden]; [key hidden] is fine',
    );
  });

  it('describes a key by its position and source, never by its value', () => {
    const pool = new CredentialPool(['sk-secret-1', 'sk-secret-2'], 'providers.x.api_keys', clock);
    const single = new CredentialPool(['sk-secret'], 'OPENAI_API_KEY', clock);

    expect(pool.describe({ value: 'sk-secret-2', position: 2 })).toBe('key 2 of 2 from providers.x.api_keys');
    expect(single.describe({ value: 'sk-secret', position: 1 })).toBe('the key from OPENAI_API_KEY');
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');

  it.each([
    ['30', 30_000],
    ['1.5', 1_500],
    ['0', 0],
    ['Tue, 01 Jan 2030 00:01:00 GMT', 60_000],
    ['Tue, 31 Dec 2029 23:00:00 GMT', 0],
  ])('reads %j as %i ms', (header, expected) => {
    expect(retryAfterMs(header, now)).toBe(expected);
  });

  it.each([[null], [undefined], [''], ['soon']])('is null for %j', (header) => {
    expect(retryAfterMs(header, now)).toBeNull();
  });
});
