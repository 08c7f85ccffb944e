import { retryAfterMs } from '../../../src/adapters/agents/sdkErrors.js';

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
