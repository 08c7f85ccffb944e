import { splitMessage } from '../../src/domain/delivery/splitMessage.js';
import { matchChannel } from '../../src/domain/delivery/channelDirectory.js';
import { retryDelayMs } from '../../src/domain/delivery/deliveryRetry.js';

const bodyOf = (part: string) => part.replace(/ \(\d+\/\d+\)$/, '');

describe('splitMessage', () => {
  it('leaves an answer that fits as one part without a number', () => {
    expect(splitMessage('short answer', 4096)).toEqual(['short answer']);
    expect(splitMessage('x'.repeat(5000), null)).toEqual(['x'.repeat(5000)]);
  });

  it('numbers every part and keeps each within the limit, ending included', () => {
    const text = Array.from({ length: 300 }, (_, n) => `Line ${n} of the report.`).join('\n');
    const parts = splitMessage(text, 500);
    expect(parts.length).toBeGreaterThan(1);
    parts.forEach((part, index) => {
      expect(part.length).toBeLessThanOrEqual(500);
      expect(part.endsWith(` (${index + 1}/${parts.length})`)).toBe(true);
    });
    expect(parts.map(bodyOf).join('\n')).toBe(text);
  });

  it('cuts at a blank line before a line end, and at a line end before a space', () => {
    const text = `${'a'.repeat(200)}\n\n${'b'.repeat(100)}\n${'c'.repeat(150)}`;
    const parts = splitMessage(text, 340).map(bodyOf);
    expect(parts[0]).toBe('a'.repeat(200));
    const words = splitMessage(`${'word '.repeat(100)}`.trim(), 120).map(bodyOf);
    for (const part of words) expect(part).toMatch(/^(word )*word$/);
  });

  it('closes a code block cut by a split and reopens it with its language', () => {
    const code = Array.from({ length: 80 }, (_, n) => `  console.log(${n});`).join('\n');
    const text = `Here is the fix:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThat is all.`;
    const parts = splitMessage(text, 400);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      const fences = bodyOf(part)
        .split('\n')
        .filter((line) => line.startsWith('```'));
      expect(fences.length % 2).toBe(0);
      expect(part.length).toBeLessThanOrEqual(400);
    }
    expect(bodyOf(parts[1]!).startsWith('```ts\n')).toBe(true);
    const rejoined = parts
      .map(bodyOf)
      .join('\n')
      .match(/console\.log\(\d+\)/g);
    expect(rejoined).toHaveLength(80);
  });

  it('copes with a code fence that is never closed', () => {
    const text = `Output:\n\`\`\`\n${'x = 1\n'.repeat(400)}`;
    const parts = splitMessage(text, 300);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(300);
    expect(parts.map(bodyOf).join('').match(/x = 1/g)).toHaveLength(400);
  });

  it('splits 100,000 characters without a space anywhere and never inside a surrogate pair', () => {
    const text = '😀'.repeat(50_000);
    const parts = splitMessage(text, 4096);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(4096);
      expect(bodyOf(part)).toBe(
        Array.from(bodyOf(part))
          .filter((char) => char === '😀')
          .join(''),
      );
    }
    expect(parts.map(bodyOf).join('')).toBe(text);
    expect(parts.at(-1)).toMatch(/ \(25\/25\)$/);
  });
});

describe('retryDelayMs', () => {
  it('waits the platform hint on a 429, at most 60 s', () => {
    expect(retryDelayMs('rate_limited', 1, 7000)).toBe(7000);
    expect(retryDelayMs('rate_limited', 1, 3_600_000)).toBe(60_000);
  });
  it('backs off 1 s then 2 s on server errors and stops after the third attempt', () => {
    expect([1, 2, 3].map((attempt) => retryDelayMs('unavailable', attempt, null))).toEqual([1000, 2000, null]);
  });
  it('never retries a refusal', () => {
    expect(retryDelayMs('refused', 1, null)).toBeNull();
  });
});

describe('matchChannel', () => {
  const channels = [
    { id: 'C01', name: 'general' },
    { id: 'C02', name: 'General-Chat' },
    { id: 'C03', name: 'deploys' },
    { id: 'C04', name: 'design' },
  ];
  it('finds an exact id, then a name whatever its case, then a unique prefix', () => {
    expect(matchChannel(channels, 'C03')).toEqual({ found: true, id: 'C03' });
    expect(matchChannel(channels, '#GENERAL')).toEqual({ found: true, id: 'C01' });
    expect(matchChannel(channels, 'depl')).toEqual({ found: true, id: 'C03' });
  });
  it('refuses a prefix shared by several channels and a name nobody has', () => {
    expect(matchChannel(channels, 'de')).toMatchObject({ found: false, reason: 'ambiguous' });
    expect(matchChannel(channels, 'random')).toEqual({ found: false, reason: 'unknown', candidates: [] });
  });
});
