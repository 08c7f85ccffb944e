import { CredentialPool } from '../../../src/domain/agent/CredentialPool.js';

describe('CredentialPool', () => {
  let now = 1_000_000;

  beforeEach(() => {
    now = 1_000_000;
  });

  it('keeps using the first key until it is rate-limited', () => {
    const pool = new CredentialPool(['k1', 'k2'], 'OPENAI_API_KEYS');

    expect(pool.nextAvailable(now)).toEqual({ value: 'k1', position: 1 });
    expect(pool.nextAvailable(now)).toEqual({ value: 'k1', position: 1 });
  });

  it('skips a cooling key until its cool-down is over', () => {
    const pool = new CredentialPool(['k1', 'k2'], 'OPENAI_API_KEYS');
    pool.coolDown(pool.nextAvailable(now)!, 30_000, now);

    expect(pool.nextAvailable(now)?.value).toBe('k2');
    now += 29_999;
    expect(pool.nextAvailable(now)?.value).toBe('k2');
    now += 1;
    expect(pool.nextAvailable(now)?.value).toBe('k1');
  });

  it('has no key while every key cools, and says when the first is free again', () => {
    const pool = new CredentialPool(['k1', 'k2'], 'OPENAI_API_KEYS');
    pool.coolDown({ value: 'k1', position: 1 }, 10_000, now);
    pool.coolDown({ value: 'k2', position: 2 }, 5_000, now);

    expect(pool.nextAvailable(now)).toBeNull();
    expect(pool.msUntilAvailable(now)).toBe(5_000);
  });

  it('keeps a longer cool-down when a shorter one follows', () => {
    const pool = new CredentialPool(['k1'], 'OPENAI_API_KEY');
    pool.coolDown({ value: 'k1', position: 1 }, 60_000, now);
    pool.coolDown({ value: 'k1', position: 1 }, 1_000, now);

    now += 30_000;

    expect(pool.nextAvailable(now)).toBeNull();
  });

  it('says how long until the first key rests no more', () => {
    const pool = new CredentialPool(['k1', 'k2'], 'OPENAI_API_KEYS');
    pool.coolDown({ value: 'k1', position: 1 }, 10_000, now);
    pool.coolDown({ value: 'k2', position: 2 }, 4_200, now);

    expect(pool.restingProblem(now)).toBe(
      'rate-limited: all 2 keys from OPENAI_API_KEYS are cooling down (the first is usable again in 5 s)',
    );
  });

  it('hides its keys in a text that quotes them', () => {
    const pool = new CredentialPool(['sk-a1', 'sk-b2'], 'OPENAI_API_KEYS');

    expect(pool.redact('Incorrect API key provided: sk-b2; sk-a1 is fine')).toBe(
      'Incorrect API key provided: [key hidden]; [key hidden] is fine',
    );
  });

  it('describes a key by its position and source, never by its value', () => {
    const pool = new CredentialPool(['sk-secret-1', 'sk-secret-2'], 'providers.x.api_keys');
    const single = new CredentialPool(['sk-secret'], 'OPENAI_API_KEY');

    expect(pool.describe({ value: 'sk-secret-2', position: 2 })).toBe('key 2 of 2 from providers.x.api_keys');
    expect(single.describe({ value: 'sk-secret', position: 1 })).toBe('the key from OPENAI_API_KEY');
  });
});
