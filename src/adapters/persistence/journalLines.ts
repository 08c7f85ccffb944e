import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

const NEWLINE = 0x0a;
/** How much of a file is read at once: scans and copies hold this much, however large the file. */
export const CHUNK_BYTES = 1024 * 1024;
/** Slack (newlines) is looked through backwards in steps of this size. */
const TAIL_STEP_BYTES = 64 * 1024;

/**
 * An open file that records are read from by position while others may be done with it: `close`
 * lets the reads under way finish first, so a file replaced or removed meanwhile never fails a
 * read that had already begun. The file's kernel lock, if any, lasts until it is closed.
 */
export class RecordFile {
  private reads = 0;
  private closing: Promise<void> | null = null;
  private releaseClosing: (() => void) | null = null;

  constructor(readonly handle: FileHandle) {}

  /** `length` bytes at `position`, fewer only at the end of the file; throws once `close` was called. */
  async read(position: number, length: number): Promise<Buffer> {
    const bytes = Buffer.allocUnsafe(length);
    const filled = await this.readInto(bytes, 0, length, position);
    return filled === length ? bytes : bytes.subarray(0, filled);
  }

  /**
   * As `read`, done on the calling thread: for a small record just written, which the kernel
   * still holds in its page cache, so that the read waits behind no other file operation of the
   * process's thread pool. Throws once `close` was called.
   */
  readNow(position: number, length: number): Buffer {
    if (this.closing) throw new Error('the file was closed');
    const bytes = Buffer.allocUnsafe(length);
    let filled = 0;
    while (filled < length) {
      const bytesRead = readSync(this.handle.fd, bytes, filled, length - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled === length ? bytes : bytes.subarray(0, filled);
  }

  /** Reads `length` bytes at `position` into `target` at `offset`; returns how many there were (fewer only at the end of the file). */
  async readInto(target: Buffer, offset: number, length: number, position: number): Promise<number> {
    if (this.closing) throw new Error('the file was closed');
    this.reads += 1;
    try {
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await this.handle.read(target, offset + filled, length - filled, position + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return filled;
    } finally {
      this.reads -= 1;
      if (this.reads === 0) this.releaseClosing?.();
    }
  }

  /** Closes the file once the reads under way have ended. Idempotent; never throws. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.reads > 0) await new Promise<void>((resolve) => (this.releaseClosing = resolve));
      await this.handle.close().catch(() => undefined);
    })();
    return this.closing;
  }
}

/**
 * Where the intact records of a file of newline-ended JSON lines end, read from its tail: after
 * the last line that is whole (ends in a newline and parses as JSON), before any slack (trailing
 * newlines). `torn` when the last line with content was cut short (a write interrupted before it
 * was acknowledged): it is not part of the records.
 */
export async function intactEnd(file: RecordFile, size: number): Promise<{ length: number; torn: boolean }> {
  let end = size;
  for (;;) {
    if (end === 0) return { length: 0, torn: false };
    const from = Math.max(0, end - TAIL_STEP_BYTES);
    const bytes = await file.read(from, end - from);
    let last = bytes.length;
    while (last > 0 && bytes[last - 1] === NEWLINE) last -= 1;
    end = from + last;
    if (last > 0) break;
  }
  let lineStart = 0;
  for (let before = end; before > 0;) {
    const from = Math.max(0, before - TAIL_STEP_BYTES);
    const at = (await file.read(from, before - from)).lastIndexOf(NEWLINE);
    if (at >= 0) {
      lineStart = from + at + 1;
      break;
    }
    before = from;
  }
  if (end < size) {
    try {
      JSON.parse((await file.read(lineStart, end - lineStart)).toString('utf8'));
      return { length: end + 1, torn: false };
    } catch {
      // Cut short and followed by slack: torn all the same.
    }
  }
  return { length: lineStart, torn: true };
}

/**
 * Calls `line` for every line of the first `end` bytes (each ends in a newline there), in order,
 * with the bytes of the chunk it lies in, where it starts and ends in them (the newline not
 * included), and its position in the file. The chunk is reused: `line` copies what it keeps.
 * Holds one chunk, or the longest line when that is longer.
 */
export async function scanLines(
  file: RecordFile,
  end: number,
  line: (bytes: Buffer, start: number, stop: number, position: number) => void,
): Promise<void> {
  let buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(end, 1)));
  /** File position of buffer[0]. */
  let base = 0;
  /** Bytes of the buffer holding file content (a line carried over, then what was read). */
  let filled = 0;
  while (base + filled < end) {
    if (filled === buffer.length) {
      // One line longer than the buffer: make room for it.
      const bigger = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(bigger, 0, 0, filled);
      buffer = bigger;
    }
    const want = Math.min(buffer.length - filled, end - base - filled);
    const got = await file.readInto(buffer, filled, want, base + filled);
    if (got === 0) throw new Error(`the file ended before byte ${end}`);
    filled += got;
    const content = buffer.subarray(0, filled);
    let start = 0;
    for (let stop = content.indexOf(NEWLINE, start); stop !== -1; stop = content.indexOf(NEWLINE, start)) {
      line(buffer, start, stop, base + start);
      start = stop + 1;
    }
    buffer.copy(buffer, 0, start, filled);
    base += start;
    filled -= start;
  }
}

/**
 * Reads records at increasing positions of a file through a window of CHUNK_BYTES, so that
 * copying many small records costs a read per chunk, not one per record. What `read` returns is
 * a view of the window: valid until the next call.
 */
export class WindowReader {
  private window = Buffer.alloc(0);
  private start = 0;
  private end = 0;

  constructor(private readonly file: RecordFile) {}

  async read(position: number, length: number): Promise<Buffer> {
    if (position < this.start || position + length > this.end) {
      const size = Math.max(CHUNK_BYTES, length);
      if (this.window.length < size) this.window = Buffer.allocUnsafe(size);
      const got = await this.file.readInto(this.window, 0, size, position);
      this.start = position;
      this.end = position + got;
      if (got < length) throw new Error(`the record at byte ${position} goes past the end of the file`);
    }
    return this.window.subarray(position - this.start, position - this.start + length);
  }
}
