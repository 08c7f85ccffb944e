import { cutToolResult, SecretScrubber, TOOL_RESULT_LIMIT_BYTES, transcriptUsageOf } from '../../src/domain/runs/RunTranscript.js';

describe('a transcript tool result cut', () => {
  it('keeps a result of at most 4 KB whole, with no note', () => {
    const text = 'x'.repeat(TOOL_RESULT_LIMIT_BYTES);

    expect(cutToolResult(text)).toEqual({ result: text, result_bytes: 4096, cut: null });
  });

  it('keeps the first 4 KB of a longer result and notes how much of how much was cut', () => {
    const cut = cutToolResult('y'.repeat(10_000));

    expect(cut.result).toBe('y'.repeat(4096));
    expect(cut.result_bytes).toBe(10_000);
    expect(cut.cut).toBe('5,904 of 10,000 bytes cut: the result is kept to its first 4 KB');
  });

  it('counts bytes in UTF-8 and never cuts a character in two', () => {
    const cut = cutToolResult('é'.repeat(3000));

    expect(cut.result).toBe('é'.repeat(2048));
    expect(cut.result_bytes).toBe(6000);
  });
});

describe('SecretScrubber', () => {
  it('replaces every occurrence of each credential value with its name', () => {
    const scrubber = new SecretScrubber([{ name: 'OPENAI_API_KEY', value: 'sk-live-123456' }]);

    expect(scrubber.scrub('key sk-live-123456 and again sk-live-123456.')).toBe(
      'key [redacted OPENAI_API_KEY] and again [redacted OPENAI_API_KEY].',
    );
  });

  it('leaves values shorter than six characters alone: they would match ordinary text', () => {
    const scrubber = new SecretScrubber([{ name: 'SHORT_TOKEN', value: 'abc' }]);

    expect(scrubber.scrub('abc abcdef')).toBe('abc abcdef');
  });

  it('replaces a longer value that holds a shorter one whole', () => {
    const scrubber = new SecretScrubber([
      { name: 'A_TOKEN', value: 'secret' },
      { name: 'B_TOKEN', value: 'secret-and-more' },
    ]);

    expect(scrubber.scrub('secret-and-more / secret')).toBe('[redacted B_TOKEN] / [redacted A_TOKEN]');
  });
});

describe('transcriptUsageOf', () => {
  it('reads a turn usage in either spelling, and none when the turn has none', () => {
    expect(transcriptUsageOf({ input_tokens: 10, output_tokens: 2, cached_input_tokens: 4 })).toEqual({
      input_tokens: 10,
      output_tokens: 2,
      cached_input_tokens: 4,
    });
    expect(transcriptUsageOf({ inputTokens: 7, outputTokens: 1 })).toEqual({ input_tokens: 7, output_tokens: 1, cached_input_tokens: 0 });
    expect(transcriptUsageOf(undefined)).toBeUndefined();
  });
});
