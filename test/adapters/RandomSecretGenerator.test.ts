import 'reflect-metadata';
import { RandomSecretGenerator } from '../../src/adapters/system/RandomSecretGenerator.js';

describe('RandomSecretGenerator', () => {
  it('makes 32 random bytes as base64url without padding, never the same twice', () => {
    const generator = new RandomSecretGenerator();
    const secrets = Array.from({ length: 50 }, () => generator.webhookSecret());

    for (const secret of secrets) {
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    }
    expect(new Set(secrets).size).toBe(50);
  });
});
