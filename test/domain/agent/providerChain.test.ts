import { AFTER_FAILURE, coolDownMs, decideAfterFailure, everyProviderFailedMessage } from '../../../src/domain/agent/providerChain.js';

describe('the provider chain', () => {
  it.each([
    ['rate_limited', true, 'next_key'],
    ['rate_limited', false, 'wait'],
    ['unreachable', true, 'next_provider'],
    ['server', false, 'next_provider'],
    ['auth', true, 'end_run'],
    ['rejected', false, 'end_run'],
    ['aborted', true, 'stop'],
  ] as const)('after %s (another key: %s) decides %s', (failure, hasKeys, decision) => {
    expect(decideAfterFailure(failure, hasKeys)).toBe(decision);
  });

  it('has a row for every failure, and only a rate limit depends on keys', () => {
    const dependsOnKeys = Object.entries(AFTER_FAILURE)
      .filter(([, row]) => row.withKeys !== row.withoutKeys)
      .map(([failure]) => failure);

    expect(dependsOnKeys).toEqual(['rate_limited']);
  });

  it.each([
    [7_000, 7_000],
    [0, 1_000],
    [null, 30_000],
    [undefined, 30_000],
  ])('rests a key asked to wait %p for %i ms', (asked, rest) => {
    expect(coolDownMs(asked)).toBe(rest);
  });

  it('reports a lone failure as it is, and several as a list', () => {
    const link = { provider: 'openai', model: 'gpt' };

    expect(everyProviderFailedMessage([{ link, problem: 'HTTP 500' }], [])).toBe('The provider openai (gpt) failed: HTTP 500.');
    expect(everyProviderFailedMessage([{ link, problem: 'HTTP 500' }], ['fallback "x": no key.'])).toBe(
      'Every provider failed: openai (gpt): HTTP 500. Not tried: fallback "x": no key.',
    );
  });
});
