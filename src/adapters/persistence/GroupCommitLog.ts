import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoCode, replaceFileKeepingItOpen, syncDirectory } from './fileSystem.js';
import { lockOrThrow, NEWLINE, NO_SPACE, SYNC_ON_WRITE, withSlack, type LogOptions } from './groupCommitLogFile.js';
import { NewLogFile, type Rewrite } from './groupCommitLogRewrite.js';
import { intactEnd, RecordFile } from './journalLines.js';

/** One line (or several) waiting to be appended, and who waits for it. */
interface PendingAppend {
  text: string;
  durable: boolean;
  /** May use the slack that `protectedBytes` keeps back from the others. */
  reserved: boolean;
  written: ((position: number, length: number) => void) | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A retried compaction after a failed one waits until the records grew by this much. */
const COMPACTION_RETRY_BYTES = 1024 * 1024;

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
 * - With `reserveBytes`, the records are followed by slack they are written into (see
 *   LogOptions); a batch that outgrows it extends the file and the slack together. On a full
 *   disk the appends marked `reserved` still go into the slack the others must leave them.
 * - A batch that fails rejects every append in it, and what it left after the records is
 *   blanked out before the next write, so a half-written batch never stands among them.
 * - Before a batch, `compaction` may ask for a rewrite: its owner streams the live content into
 *   a temporary file (before the batch, or while appends go on), the records appended meanwhile
 *   are copied after it, the file is synced and renamed over the log, the directory synced, and
 *   appends go on in the new file. A crash at any point leaves the old file or the new one,
 *   whole. A rewrite that fails (a full disk) is given up: appends go on in the old file.
 * - Records are read back by position through `file`, which a rewrite replaces; reads begun on
 *   the old file finish before it is closed.
 *
 * One writer per file; with `lock`, the kernel's lock makes sure of it across processes.
 */
export class GroupCommitLog {
  private queue: PendingAppend[] = [];
  private flushing: Promise<void> = Promise.resolve();
  /** Set from the first append of an idle log until the flush loop finds nothing more queued. */
  private flushRunning = false;
  /** Bytes of intact records: the next batch is written here. */
  private size: number;
  /** The file's length: records, then slack. */
  private length: number;
  /** A failed batch may have left bytes after `size`; they are blanked before the next write. */
  private debris = false;
  private closed = false;
  private compactionFailedAt = -Infinity;
  private reserve: number;
  private current: RecordFile;
  /** A rewrite copying alongside the appends, until it is swapped in or given up. */
  private rewriting: Promise<void> | null = null;
  /** A rewrite whose owner has copied its content, waiting for the flush loop to finish it. */
  private finishing: (() => Promise<void>) | null = null;

  /**
   * A log on `handle`, the open file at `path` holding `size` bytes of records in `length`;
   * `syncsOnWrite` when it was opened `O_DSYNC`. See `create` and `open`.
   */
  constructor(
    private readonly path: string,
    handle: FileHandle,
    size: number,
    private readonly options: LogOptions = {},
    private readonly syncsOnWrite = false,
    length = size,
  ) {
    this.current = new RecordFile(handle);
    this.size = size;
    this.length = length;
    this.reserve = options.reserveBytes ?? 0;
  }

  /** The file as it is now, to read records from by position (a rewrite replaces it). */
  get file(): RecordFile {
    return this.current;
  }

  /** Bytes of records in the file. */
  recordsBytes(): number {
    return this.size;
  }

  /**
   * Makes `text` (and the slack) the whole content of `path`, durably (a crash leaves the old
   * file or this one; a new file is 0600), and opens the log on it for appending after it.
   */
  static async create(path: string, text: string | Buffer, options: LogOptions = {}): Promise<GroupCommitLog> {
    let content = withSlack(text, options.reserveBytes ?? 0);
    const lock = options.lock ? lockOrThrow(path) : undefined;
    let handle: FileHandle;
    try {
      handle = await replaceFileKeepingItOpen(path, content, SYNC_ON_WRITE, lock);
    } catch (error) {
      if (!NO_SPACE.has(errnoCode(error) ?? '') || content.length === Buffer.byteLength(text)) throw error;
      // A full disk: without its slack for now; a later batch pads it once there is room.
      content = withSlack(text, 0);
      handle = await replaceFileKeepingItOpen(path, content, SYNC_ON_WRITE, lock);
    }
    try {
      await syncDirectory(dirname(path));
    } catch (error) {
      await handle.close();
      throw error;
    }
    return new GroupCommitLog(path, handle, Buffer.byteLength(text), options, SYNC_ON_WRITE !== 0, content.length);
  }

  /**
   * Opens the log at `path` as it is, for appending after its intact records (a torn last record
   * is overwritten by the next batch); creates it empty when there is none. Needs no free space
   * beyond a new file's. Reads only the file's tail; returns the log and how many bytes its
   * records take (read them through `log.file`).
   */
  static async open(path: string, options: LogOptions = {}): Promise<{ log: GroupCommitLog; recordsBytes: number; torn: boolean }> {
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDWR | SYNC_ON_WRITE);
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
      return { log: await GroupCommitLog.create(path, '', options), recordsBytes: 0, torn: false };
    }
    try {
      if (options.lock) await lockOrThrow(path)(handle);
      const { size } = await handle.stat();
      const { length, torn } = await intactEnd(new RecordFile(handle), size);
      const log = new GroupCommitLog(path, handle, length, options, SYNC_ON_WRITE !== 0, size);
      // Whatever a torn record left is blanked before the first batch.
      log.debris = torn;
      return { log, recordsBytes: length, torn };
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Appends `text` (whole lines, each ending in a newline); see the class comment for `durable`
   * and `reserved`. `written` is called as soon as the batch is on disk, before the next batch
   * is planned (state that the compaction plan reads must change there, not after the returned
   * promise settles), with where `text` now lies in `file`: its position and its length in bytes.
   */
  append(text: string, durable: boolean, written?: (position: number, length: number) => void, reserved = false): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`the log ${this.path} is closed`));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ text, durable, reserved, written, resolve, reject });
      if (durable) this.startFlush();
      else setImmediate(() => this.startFlush());
    });
  }

  /** Slack after the records, less what waits to be written into it. */
  spareBytes(): number {
    const queued = this.queue.reduce((sum, append) => sum + Buffer.byteLength(append.text, 'utf8'), 0);
    return this.length - this.size - queued;
  }

  /**
   * Raises the slack kept after the records to at least `bytes` (never lowers it) and tries to
   * pad the file up to it: for a caller whose reservations outgrew the slack it opened with.
   */
  reserveAtLeast(bytes: number): Promise<void> {
    if (bytes <= this.reserve) return Promise.resolve();
    this.reserve = bytes;
    return this.refillSlack();
  }

  /** Tries to bring the slack back to `reserveBytes` (after a full disk); settles once tried. */
  refillSlack(): Promise<void> {
    return this.append('', true).catch(() => undefined);
  }

  /**
   * Waits for everything appended so far, gives up a rewrite under way, then closes the file
   * (and lets its lock go). Later appends are refused.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.startFlush();
    await this.rewriting;
    await this.flushing;
    await this.current.close();
  }

  private startFlush(): void {
    if (this.flushRunning || (this.queue.length === 0 && this.finishing === null)) return;
    this.flushRunning = true;
    this.flushing = this.flush();
  }

  private async flush(): Promise<void> {
    // Ends in the same turn as its last check of the queue, so an append made after that check
    // (say, by a caller resuming from the batch just settled) always starts a new loop.
    for (;;) {
      const finish = this.finishing;
      this.finishing = null;
      if (finish !== null) await finish();
      if (this.queue.length === 0) {
        this.flushRunning = false;
        return;
      }
      const batch = this.queue;
      this.queue = [];
      try {
        await this.writeBatch(batch);
      } catch (error) {
        for (const append of batch) append.reject(error);
      }
    }
  }

  /** Writes the batch and settles its appends (all of them, or on a full disk the reserved ones); throws when none was written. */
  private async writeBatch(batch: PendingAppend[]): Promise<void> {
    if (this.debris) await this.blankDebris();
    await this.compactIfPlanned();
    const keep = this.options.protectedBytes?.() ?? 0;
    const { bytes, offsets } = encode(batch);
    const at = this.size;
    const room = this.length - this.size;
    const allReserved = batch.every((append) => append.reserved);
    const durable = batch.some((append) => append.durable);
    if (bytes.length + (allReserved ? 0 : keep) <= room) {
      await this.writeRecords(bytes, 0, durable);
    } else {
      try {
        await this.writeRecords(bytes, this.reserve, durable);
      } catch (error) {
        const reserved = batch.filter((append) => append.reserved);
        if (!NO_SPACE.has(errnoCode(error) ?? '') || reserved.length === 0 || reserved.length === batch.length) throw error;
        // The disk is full: what may use the slack kept for it goes in; the rest fails.
        for (const append of batch) if (!append.reserved) append.reject(error);
        await this.writeBatch(reserved);
        return;
      }
    }
    // Before the appends settle, so that a caller looking at the slack next sees it refilled.
    if (this.length - this.size < this.reserve / 2) await this.extendSlack().catch(() => undefined);
    batch.forEach((append, index) => append.written?.(at + offsets[index]!, offsets[index + 1]! - offsets[index]!));
    for (const append of batch) append.resolve();
  }

  /** Writes `bytes` at the end of the records, followed by `slack` bytes of slack when the file would have less. */
  private async writeRecords(bytes: Buffer, slack: number, durable: boolean): Promise<void> {
    const grows = this.size + bytes.length + slack > this.length;
    const out = grows && slack > 0 ? Buffer.concat([bytes, Buffer.alloc(slack, NEWLINE)]) : bytes;
    try {
      await this.writeAt(out, this.size);
      if (!this.syncsOnWrite && durable) await this.current.handle.datasync();
    } catch (error) {
      this.debris = true;
      throw error;
    }
    this.size += bytes.length;
  }

  /** Writes `bytes` at `position`, keeping `length` up to date with what reached the file, even on failure. */
  private async writeAt(bytes: Buffer, position: number): Promise<void> {
    let offset = 0;
    try {
      while (offset < bytes.length) {
        const { bytesWritten } = await this.current.handle.write(bytes, offset, bytes.length - offset, position + offset);
        offset += bytesWritten;
      }
    } finally {
      this.length = Math.max(this.length, position + offset);
    }
  }

  /** Pads the file with newlines up to `reserveBytes` of slack (a failure leaves what got written). */
  private async extendSlack(): Promise<void> {
    const missing = this.size + this.reserve - this.length;
    if (missing <= 0) return;
    await this.writeAt(Buffer.alloc(missing, NEWLINE), this.length);
    if (!this.syncsOnWrite) await this.current.handle.datasync();
  }

  /**
   * Removes whatever a failed batch left after the records: without slack the file is cut back
   * to them; with slack it is overwritten with newlines, in space the file has.
   */
  private async blankDebris(): Promise<void> {
    if (this.reserve === 0) {
      await this.current.handle.truncate(this.size);
      this.length = this.size;
      this.debris = false;
      return;
    }
    const { size } = await this.current.handle.stat();
    this.length = Math.max(this.length, size);
    if (this.length > this.size) {
      await this.writeAt(Buffer.alloc(this.length - this.size, NEWLINE), this.size);
      if (!this.syncsOnWrite) await this.current.handle.datasync();
    }
    this.debris = false;
  }

  /**
   * Starts the rewrite the compaction plan asks for, if any: done here, before the batch, or
   * left copying alongside the appends. At most one at a time; one that failed (a full disk,
   * most likely) is tried again once the records have grown by COMPACTION_RETRY_BYTES.
   */
  private async compactIfPlanned(): Promise<void> {
    if (this.rewriting !== null || this.closed || this.size < this.compactionFailedAt + COMPACTION_RETRY_BYTES) return;
    const plan = this.options.compaction?.(this.size) ?? null;
    if (plan === null) return;
    let target: NewLogFile;
    try {
      target = await NewLogFile.create(this.path, this.size, this.syncsOnWrite ? SYNC_ON_WRITE : 0, () => this.closed);
    } catch {
      this.compactionFailedAt = this.size;
      return;
    }
    if (!plan.alongside) {
      await this.copyAndSwap(plan, target, plan.copy(target));
      return;
    }
    const copied = plan.copy(target);
    this.rewriting = new Promise<void>((resolve) => {
      // Whatever the copy's outcome, the swap (or giving up) happens in the flush loop.
      const ready = () => {
        this.finishing = () => this.copyAndSwap(plan, target, copied).finally(resolve);
        this.startFlush();
      };
      copied.then(ready, ready);
    }).finally(() => {
      this.rewriting = null;
    });
  }

  /** Once `copied` settles: puts the records appended since `target.from` after the content, and swaps the file in; gives up on failure. Runs in the flush loop. */
  private async copyAndSwap(plan: Rewrite, target: NewLogFile, copied: Promise<void>): Promise<void> {
    try {
      await copied;
      if (this.closed) throw new Error(`the log ${this.path} is closed`);
      await target.copyFrom(this.current, target.from, this.size);
      await target.finish(this.reserve, !this.syncsOnWrite, this.options.lock ? lockOrThrow(this.path) : undefined);
    } catch {
      await target.abandon();
      this.compactionFailedAt = this.size;
      return;
    }
    const previous = this.current;
    const from = target.from;
    const shift = target.contentBytes - from;
    this.current = new RecordFile(target.handle);
    this.size = target.written;
    this.length = target.written + this.reserve;
    this.debris = false;
    plan.swapped(from, shift);
    void previous.close();
    // As after any rename, nothing is left to undo when this fails: appends go on in the new file.
    await syncDirectory(dirname(this.path)).catch(() => undefined);
  }
}

/** The batch as one buffer, and where each append's part of it begins (and, last, its length). */
function encode(batch: PendingAppend[]): { bytes: Buffer; offsets: number[] } {
  const lengths = batch.map((append) => Buffer.byteLength(append.text, 'utf8'));
  const bytes = Buffer.allocUnsafe(lengths.reduce((sum, length) => sum + length, 0));
  const offsets = [0];
  let offset = 0;
  batch.forEach((append, index) => {
    bytes.write(append.text, offset, 'utf8');
    offset += lengths[index]!;
    offsets.push(offset);
  });
  return { bytes, offsets };
}
