import { constants } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { tryLockFile } from './fileLock.js';
import { errnoCode, PRIVATE_FILE_MODE, replaceFileKeepingItOpen, syncDirectory, temporaryPathFor } from './fileSystem.js';
import { CHUNK_BYTES, intactEnd, RecordFile } from './journalLines.js';

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
  /** May use the slack that `protectedBytes` keeps back from the others. */
  reserved: boolean;
  written: ((position: number, length: number) => void) | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * A rewrite of the log's file with its live content, which its owner writes into `into` in
 * order. Records at positions from `into.from` on are not the owner's to copy: the log puts
 * everything appended at or after that position after the owner's content.
 */
export interface Rewrite {
  /**
   * Whether the owner's copying runs while appends go on in the old file (a large backlog): the
   * appends wait only while the records appended meanwhile are copied and the files swapped.
   * Otherwise the appends wait for the whole rewrite.
   */
  alongside: boolean;
  copy(into: RewriteTarget): Promise<void>;
  /**
   * The new file has replaced the old one: records that were at `position >= from` in the old
   * file are at `position + shift` in the new one. Called before any other batch is written.
   */
  swapped(from: number, shift: number): void;
}

/** Where a rewrite's content goes. */
export interface RewriteTarget {
  /** The old file's records before this position are the owner's to copy (or drop). */
  readonly from: number;
  /** Position in the new file of the next byte written. */
  readonly written: number;
  /** Appends `bytes` (copied at once: the caller may reuse them when this returns). */
  write(bytes: Buffer): Promise<void>;
}

/**
 * What the log asks its owner before each batch, with the bytes of records in the file: a
 * rewrite to make now (the file has grown and most of it is dead records), or null.
 */
export type CompactionPlan = (recordsBytes: number) => Rewrite | null;

export interface LogOptions {
  compaction?: CompactionPlan;
  /**
   * Bytes of slack kept after the records: the file is padded with newlines (blank lines, which
   * readers skip) that later records overwrite in place. Overwriting blocks the file already
   * has needs no free space, so records that fit in the slack are written even on a full disk.
   * Default 0: no slack.
   */
  reserveBytes?: number;
  /**
   * How much of the slack only appends marked `reserved` may use: a batch of other appends that
   * would leave less than this grows the file instead, and fails when the disk is full.
   */
  protectedBytes?: () => number;
  /** Holds an exclusive kernel lock on the file for as long as the log is open; opening fails when another holder has it. */
  lock?: boolean;
}

/** The file is locked by another open log (a live process). */
export class LogInUse extends Error {
  constructor(readonly path: string) {
    super(`${path} is in use by another process`);
  }
}

/** A retried compaction after a failed one waits until the records grew by this much. */
const COMPACTION_RETRY_BYTES = 1024 * 1024;
/** Errors of a full disk or quota: the write may succeed in space the file already has. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);
const NEWLINE = 0x0a;

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
  private readonly reserve: number;
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

/**
 * The file a rewrite builds beside the log: written in chunks of CHUNK_BYTES (so a rewrite holds
 * one chunk however large the backlog), synced, locked and renamed over the log by `finish`.
 */
class NewLogFile implements RewriteTarget {
  private readonly chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private buffered = 0;
  /** Bytes on disk. */
  private flushed = 0;
  /** Bytes of the owner's content, once `copyFrom` began. */
  contentBytes = 0;

  private constructor(
    private readonly path: string,
    private readonly temporary: string,
    readonly handle: FileHandle,
    readonly from: number,
    private readonly cancelled: () => boolean,
  ) {}

  static async create(path: string, from: number, flags: number, cancelled: () => boolean): Promise<NewLogFile> {
    const temporary = temporaryPathFor(path);
    const handle = await open(temporary, constants.O_CREAT | constants.O_EXCL | constants.O_RDWR | flags, PRIVATE_FILE_MODE);
    return new NewLogFile(path, temporary, handle, from, cancelled);
  }

  get written(): number {
    return this.flushed + this.buffered;
  }

  async write(bytes: Buffer): Promise<void> {
    if (this.cancelled()) throw new Error(`the log ${this.path} is closed`);
    if (this.buffered + bytes.length > this.chunk.length) await this.flush();
    if (bytes.length > this.chunk.length) {
      await this.writeOut(bytes);
      return;
    }
    bytes.copy(this.chunk, this.buffered);
    this.buffered += bytes.length;
  }

  /** Appends the bytes of `file` from `start` to `end`, a chunk at a time. */
  async copyFrom(file: RecordFile, start: number, end: number): Promise<void> {
    await this.flush();
    this.contentBytes = this.flushed;
    for (let position = start; position < end; ) {
      const length = await file.readInto(this.chunk, 0, Math.min(this.chunk.length, end - position), position);
      if (length === 0) throw new Error(`${this.path} ended before byte ${end}`);
      await this.writeOut(this.chunk.subarray(0, length));
      position += length;
    }
  }

  /** Adds `slack` newlines, syncs (when the file was not opened to sync each write), runs `beforeRename`, and takes the log's name. */
  async finish(slack: number, sync: boolean, beforeRename?: (handle: FileHandle) => Promise<void>): Promise<void> {
    await this.flush();
    const end = this.flushed;
    if (slack > 0) await this.writeOut(Buffer.alloc(slack, NEWLINE));
    this.flushed = end;
    if (sync) await this.handle.datasync();
    await beforeRename?.(this.handle);
    await rename(this.temporary, this.path);
  }

  async abandon(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await rm(this.temporary, { force: true }).catch(() => undefined);
  }

  private async flush(): Promise<void> {
    if (this.buffered === 0) return;
    const length = this.buffered;
    this.buffered = 0;
    await this.writeOut(this.chunk.subarray(0, length));
  }

  private async writeOut(bytes: Buffer): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesWritten } = await this.handle.write(bytes, offset, bytes.length - offset, this.flushed + offset);
      offset += bytesWritten;
    }
    this.flushed += bytes.length;
  }
}

function withSlack(text: string | Buffer, slack: number): Buffer {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return slack === 0 ? bytes : Buffer.concat([bytes, Buffer.alloc(slack, NEWLINE)]);
}

/** Locks the handle's file for its life, or throws LogInUse. */
function lockOrThrow(path: string): (handle: FileHandle) => Promise<void> {
  return async (handle) => {
    if (!(await tryLockFile(handle))) throw new LogInUse(path);
  };
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
