import { HeadAndTailOutput } from '../../../src/adapters/process/HeadAndTailOutput.js';

function collect(chunks: string[], head = 4, tail = 4): HeadAndTailOutput {
  const output = new HeadAndTailOutput(head, tail);
  for (const chunk of chunks) output.append(Buffer.from(chunk));
  return output;
}

describe('HeadAndTailOutput', () => {
  it('keeps everything that fits', () => {
    const output = collect(['abc', 'defgh']);

    expect(output.text()).toBe('abcdefgh');
    expect(output.droppedBytes).toBe(0);
  });

  it('keeps the start and the end and says how many bytes were left out between', () => {
    const output = collect(['abcdef', 'ghij', 'klmnopqrstuvwxyz']);

    expect(output.text()).toBe('abcd\n[… 18 bytes of output left out …]\nwxyz');
    expect(output.droppedBytes).toBe(18);
  });

  it('keeps the end across many small writes', () => {
    const output = collect([...'0123456789abcdefghij']);

    expect(output.text()).toBe('0123\n[… 12 bytes of output left out …]\nghij');
  });
});
