import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { replaceFileKeepingItOpen, syncDirectory } from './fileSystem.js';

/**
 * Where the system has it (Linux, macOS), the log is opened with `O_DSYNC`: a write returns once
 * its bytes and the file's new size are on disk, so a batch is one call to the thread pool
 * instead of a write and then an `fdatasync`. That is one hand-over between the thread pool and
 * the event loop fewer per batch, which under `npm run bench:webhook` took the accept path's
 * median wait for the disk from ~1.3 to ~0.9 ms.
 */
const SYNC_ON_WRITE: number = constants.O_DSYNC ?? 0;

/** One line (or several) waiting to be appended, and who waits for it. */
interface PendingAppend {
  text: string;
  durable: boolean;
  written: ((bytes: Buffer) => void) | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * What the log asks its owner before each batch: the whole live content when the file is worth
 * rewriting (it has grown and most of it is dead records), or null to keep appending.
 */
export type CompactionPlan = (fileBytes: number) => Buffer | null;

/**
 * An append-only text file written with group commit: appends made while a write is under way
 * wait and go out together in the next one, as one positional write followed by one
 * `fdatasync` for the whole batch (or one write on a file opened `O_DSYNC`, which is the same).
 * Under load the cost of a durable append is a share of one sync instead of a sync of its own,
 * which is what lets an HTTP accept path promise durability and still keep up.
 *
 * - An append marked `durable` resolves only once its batch is synced. One that is not (a
 *   record whose loss costs nothing) starts no write at once: it joins the batch of a durable
 *   append made meanwhile or already waiting, and only when none has come by the end of the
 *   event loop's turn is it written on its own. Under load it so rides along with the records
 *   that matter instead of holding them up behind a write of its own.
 * - A batch that fails rejects every append in it and the file is cut back to where the batch
 *   began, so a half-written batch never stands in front of later ones (until the cut succeeds,
 *   every further batch fails the same way, rather than writing after the debris).
 * - Before a batch, `compaction` may hand over the live content: it is written to a temporary
 *   file, synced and renamed over the log, then the directory is synced, and appends go on in
 *   the new file. A crash at any point leaves the old file or the new one, whole.
 *
 * One writer per file: nothing here guards against another process appending to the same path.
 */
export class GroupCommitLog {
  private queue: PendingAppend[] = [];
  private flushing: Promise<void> = Promise.resolve();
  /** Set from the first append of an idle log until the flush loop finds nothing more queued. */
  private flushRunning = false;
  /** Bytes known to be good: the next batch is written here. */
  private size: number;
  /** A failed batch may have left bytes after `size`; they are cut before the next write. */
  private debris = false;
  private closed = false;

  /**
   * A log on `handle`, the open file at `path` holding `size` good bytes; `syncsOnWrite` when it
   * was opened `O_DSYNC`. See `create`.
   */
  constructor(
    private readonly path: string,
    private handle: FileHandle,
    size: number,
    private readonly compaction: CompactionPlan,
    private readonly syncsOnWrite = false,
  ) {
    this.size = size;
  }

  /**
   * Makes `text` the whole content of `path`, durably (a crash leaves the old file or this one;
   * a new file is 0600), and opens the log on it for appending after it.
   */
  static async create(path: string, text: string | Buffer, compaction: CompactionPlan = () => null): Promise<GroupCommitLog> {
    const handle = await replaceFileKeepingItOpen(path, text, SYNC_ON_WRITE);
    try {
      await syncDirectory(dirname(path));
    } catch (error) {
      await handle.close();
      throw error;
    }
    return new GroupCommitLog(path, handle, Buffer.byteLength(text), compaction, SYNC_ON_WRITE !== 0);
  }

  /**
   * Appends `text` (whole lines, each ending in a newline); see the class comment for `durable`.
   * `written` is called as soon as the batch is on disk, before the next batch is planned (state
   * that the compaction plan reads must change there, not after the returned promise settles),
   * with the bytes written for `text`: a view of the batch's buffer, outside the JavaScript
   * heap, so that a caller keeping records for a while costs the garbage collector nothing.
   */
  append(text: string, durable: boolean, written?: (bytes: Buffer) => void): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`the log ${this.path} is closed`));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ text, durable, written, resolve, reject });
      if (durable) this.startFlush();
      else setImmediate(() => this.startFlush());
    });
  }

  /** Waits for everything appended so far, then closes the file. Later appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
    this.startFlush();
    await this.flushing;
    await this.handle.close();
  }

  private startFlush(): void {
    if (this.flushRunning || this.queue.length === 0) return;
    this.flushRunning = true;
    this.flushing = this.flush();
  }

  private async flush(): Promise<void> {
    // Ends in the same turn as its last check of the queue, so an append made after that check
    // (say, by a caller resuming from the batch just settled) always starts a new loop.
    for (;;) {
      if (this.queue.length === 0) {
        this.flushRunning = false;
        return;
      }
      const batch = this.queue;
      this.queue = [];
      try {
        const records = await this.writeBatch(batch);
        batch.forEach((append, index) => append.written?.(records[index]!));
        for (const append of batch) append.resolve();
      } catch (error) {
        for (const append of batch) append.reject(error);
      }
    }
  }

  /** Writes the batch; returns the bytes of each append, in order. */
  private async writeBatch(batch: PendingAppend[]): Promise<Buffer[]> {
    if (this.debris) {
      await this.handle.truncate(this.size);
      this.debris = false;
    }
    const live = this.compaction(this.size);
    if (live !== null) await this.rewrite(live);
    const { bytes, records } = encode(batch);
    try {
      await writeAll(this.handle, bytes, this.size);
      if (!this.syncsOnWrite && batch.some((append) => append.durable)) await this.handle.datasync();
    } catch (error) {
      this.debris = true;
      throw error;
    }
    this.size += bytes.length;
    return records;
  }

  /** Swaps in a file holding only `text`; appends go on in it. */
  private async rewrite(text: Buffer): Promise<void> {
    const handle = await replaceFileKeepingItOpen(this.path, text, this.syncsOnWrite ? SYNC_ON_WRITE : 0);
    const previous = this.handle;
    this.handle = handle;
    this.size = text.length;
    await previous.close().catch(() => undefined);
    await syncDirectory(dirname(this.path));
  }
}

/** The batch as one buffer, and each append's part of it. */
function encode(batch: PendingAppend[]): { bytes: Buffer; records: Buffer[] } {
  const lengths = batch.map((append) => Buffer.byteLength(append.text, 'utf8'));
  const bytes = Buffer.allocUnsafeSlow(lengths.reduce((sum, length) => sum + length, 0));
  const records: Buffer[] = [];
  let offset = 0;
  batch.forEach((append, index) => {
    bytes.write(append.text, offset, 'utf8');
    records.push(bytes.subarray(offset, offset + lengths[index]!));
    offset += lengths[index]!;
  });
  return { bytes, records };
}

/** Writes all of `bytes` at `position` (a regular file may take a write in parts). */
async function writeAll(handle: FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let offset = 0; offset < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, position + offset);
    offset += bytesWritten;
  }
}
