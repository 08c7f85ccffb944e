/**
 * Collects what a child process writes to one stream, keeping at most `limitBytes` so that a
 * runaway program cannot exhaust memory. Keeps the beginning (`keep: 'start'`, for answers and
 * script output) or the end (`keep: 'end'`, for stderr, whose last lines usually say what went wrong).
 */
export class CappedOutput {
  private chunks: Buffer[] = [];
  private keptBytes = 0;
  /** Whether some of the output was dropped. */
  truncated = false;

  constructor(
    private readonly limitBytes: number,
    private readonly keep: 'start' | 'end' = 'start',
  ) {}

  append(chunk: Buffer): void {
    if (this.keep === 'start') {
      const room = this.limitBytes - this.keptBytes;
      if (chunk.length > room) this.truncated = true;
      if (room <= 0) return;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(kept);
      this.keptBytes += kept.length;
      return;
    }
    this.chunks.push(chunk);
    this.keptBytes += chunk.length;
    while (this.keptBytes > this.limitBytes) {
      this.truncated = true;
      const first = this.chunks[0]!;
      const excess = this.keptBytes - this.limitBytes;
      if (first.length <= excess) {
        this.chunks.shift();
        this.keptBytes -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.keptBytes -= excess;
      }
    }
  }

  /** The kept bytes as UTF-8; a character cut at the limit becomes U+FFFD. */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
