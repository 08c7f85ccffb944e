import { closestName, editDistance } from '../../src/domain/didYouMean.js';

describe('closestName', () => {
  it('finds the key a typo probably meant: a letter missing, swapped or wrong', () => {
    expect(closestName('timezon', ['timezone', 'model', 'cron'])).toBe('timezone');
    expect(closestName('modle', ['timezone', 'model', 'cron'])).toBe('model');
    expect(closestName('Crno', ['timezone', 'model', 'cron'])).toBe('cron');
  });

  it('suggests nothing when no name is close', () => {
    expect(closestName('endpoint', ['portal_url', 'jwks_url'])).toBeNull();
    expect(closestName('url', ['portal_url', 'jwks_url'])).toBeNull();
    expect(closestName('x', [])).toBeNull();
  });

  it('completes a name cut short when only one known name begins that way', () => {
    expect(closestName('portal', ['portal_url', 'jwks_url'])).toBe('portal_url');
    expect(closestName('shutdown_grace', ['shutdown_grace_seconds'])).toBe('shutdown_grace_seconds');
  });

  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('ab', 'ba')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});
