/**
 * Collects what a child writes to one stream, keeping its first `headBytes` and its last
 * `tailBytes`: a command's output usually says what it is at the start and how it ended at the
 * end. What lies between is dropped, and the text says how much.
 */
export class HeadAndTailOutput {
  private readonly head: Buffer[] = [];
  private headKept = 0;
  private tail: Buffer[] = [];
  private tailKept = 0;
  private total = 0;

  constructor(
    private readonly headBytes: number,
    private readonly tailBytes: number,
  ) {}

  append(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.headBytes - this.headKept;
    if (room > 0) {
      const kept = chunk.subarray(0, room);
      this.head.push(kept);
      this.headKept += kept.length;
      chunk = chunk.subarray(kept.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailKept += chunk.length;
    if (this.tailKept > this.tailBytes * 2) this.trimTail();
  }

  /** Bytes written but not kept. */
  get droppedBytes(): number {
    return Math.max(0, this.total - this.headKept - Math.min(this.tailKept, this.tailBytes));
  }

  /** The kept output as UTF-8, with a marker where bytes were dropped. */
  text(): string {
    this.trimTail();
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    if (this.droppedBytes === 0) return Buffer.concat([head, tail]).toString('utf8');
    return `${head.toString('utf8')}\n[… ${this.droppedBytes} bytes of output left out …]\n${tail.toString('utf8')}`;
  }

  /** Tail chunks are trimmed in batches rather than on every append, to keep appends cheap. */
  private trimTail(): void {
    if (this.tailKept <= this.tailBytes) return;
    const joined = Buffer.concat(this.tail);
    this.tail = [joined.subarray(joined.length - this.tailBytes)];
    this.tailKept = this.tailBytes;
  }
}
