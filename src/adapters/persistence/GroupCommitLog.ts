import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { tryLockFile } from './fileLock.js';
import { errnoCode, replaceFileKeepingItOpen, syncDirectory } from './fileSystem.js';

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
  written: ((bytes: Buffer) => void) | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * What the log asks its owner before each batch: the whole live content when the file is worth
 * rewriting (it has grown and most of it is dead records), or null to keep appending.
 */
export type CompactionPlan = (fileBytes: number) => Buffer | null;

export interface LogOptions {
  compaction?: CompactionPlan;
  /** Called once a rewrite the compaction plan asked for is on disk. */
  onCompacted?: () => void;
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
 * Where the intact records of a log's bytes end: after the last line that is whole (ends in a
 * newline and parses as JSON), before any slack. `torn` when the last line with content was cut
 * short (a write interrupted before it was acknowledged): it is not part of the records.
 */
export function intactLength(bytes: Buffer): { length: number; torn: boolean } {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === NEWLINE) end -= 1;
  if (end === 0) return { length: 0, torn: false };
  const lineStart = bytes.lastIndexOf(NEWLINE, end - 1) + 1;
  if (end < bytes.length) {
    try {
      JSON.parse(bytes.subarray(lineStart, end).toString('utf8'));
      return { length: end + 1, torn: false };
    } catch {
      // Cut short and followed by slack: torn all the same.
    }
  }
  return { length: lineStart, torn: true };
}

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
 * - Before a batch, `compaction` may hand over the live content: it is written to a temporary
 *   file, synced and renamed over the log, then the directory is synced, and appends go on in
 *   the new file. A crash at any point leaves the old file or the new one, whole. A rewrite that
 *   fails (a full disk) is given up: appends go on in the old file.
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

  /**
   * A log on `handle`, the open file at `path` holding `size` bytes of records in `length`;
   * `syncsOnWrite` when it was opened `O_DSYNC`. See `create` and `open`.
   */
  constructor(
    private readonly path: string,
    private handle: FileHandle,
    size: number,
    private readonly options: LogOptions = {},
    private readonly syncsOnWrite = false,
    length = size,
  ) {
    this.size = size;
    this.length = length;
    this.reserve = options.reserveBytes ?? 0;
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
   * beyond a new file's. Returns the log and its records' bytes.
   */
  static async open(path: string, options: LogOptions = {}): Promise<{ log: GroupCommitLog; records: Buffer; torn: boolean }> {
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDWR | SYNC_ON_WRITE);
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
      return { log: await GroupCommitLog.create(path, '', options), records: Buffer.alloc(0), torn: false };
    }
    try {
      if (options.lock) await lockOrThrow(path)(handle);
      const bytes = await handle.readFile();
      const { length, torn } = intactLength(bytes);
      const log = new GroupCommitLog(path, handle, length, options, SYNC_ON_WRITE !== 0, bytes.length);
      // Whatever a torn record left is blanked before the first batch.
      log.debris = torn;
      return { log, records: bytes.subarray(0, length), torn };
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Appends `text` (whole lines, each ending in a newline); see the class comment for `durable`
   * and `reserved`. `written` is called as soon as the batch is on disk, before the next batch
   * is planned (state that the compaction plan reads must change there, not after the returned
   * promise settles), with the bytes written for `text`: a view of the batch's buffer, outside
   * the JavaScript heap, so that a caller keeping records for a while costs the garbage
   * collector nothing.
   */
  append(text: string, durable: boolean, written?: (bytes: Buffer) => void, reserved = false): Promise<void> {
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

  /** Waits for everything appended so far, then closes the file (and lets its lock go). Later appends are refused. */
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
    const { bytes, records } = encode(batch);
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
        return this.writeBatch(reserved);
      }
    }
    // Before the appends settle, so that a caller looking at the slack next sees it refilled.
    if (this.length - this.size < this.reserve / 2) await this.extendSlack().catch(() => undefined);
    batch.forEach((append, index) => append.written?.(records[index]!));
    for (const append of batch) append.resolve();
  }

  /** Writes `bytes` at the end of the records, followed by `slack` bytes of slack when the file would have less. */
  private async writeRecords(bytes: Buffer, slack: number, durable: boolean): Promise<void> {
    const grows = this.size + bytes.length + slack > this.length;
    const out = grows && slack > 0 ? Buffer.concat([bytes, Buffer.alloc(slack, NEWLINE)]) : bytes;
    try {
      await this.writeAt(out, this.size);
      if (!this.syncsOnWrite && durable) await this.handle.datasync();
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
        const { bytesWritten } = await this.handle.write(bytes, offset, bytes.length - offset, position + offset);
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
    if (!this.syncsOnWrite) await this.handle.datasync();
  }

  /**
   * Removes whatever a failed batch left after the records: without slack the file is cut back
   * to them; with slack it is overwritten with newlines, in space the file has.
   */
  private async blankDebris(): Promise<void> {
    if (this.reserve === 0) {
      await this.handle.truncate(this.size);
      this.length = this.size;
      this.debris = false;
      return;
    }
    const { size } = await this.handle.stat();
    this.length = Math.max(this.length, size);
    if (this.length > this.size) {
      await this.writeAt(Buffer.alloc(this.length - this.size, NEWLINE), this.size);
      if (!this.syncsOnWrite) await this.handle.datasync();
    }
    this.debris = false;
  }

  private async compactIfPlanned(): Promise<void> {
    if (this.size < this.compactionFailedAt + COMPACTION_RETRY_BYTES) return;
    const live = this.options.compaction?.(this.size) ?? null;
    if (live === null) return;
    try {
      await this.rewrite(live);
    } catch {
      // A full disk, most likely: the old file goes on as it is, and a later batch tries again.
      this.compactionFailedAt = this.size;
      return;
    }
    this.options.onCompacted?.();
  }

  /** Swaps in a file holding only `text` and the slack; appends go on in it. */
  private async rewrite(text: Buffer): Promise<void> {
    const content = withSlack(text, this.reserve);
    const handle = await replaceFileKeepingItOpen(
      this.path,
      content,
      this.syncsOnWrite ? SYNC_ON_WRITE : 0,
      this.options.lock ? lockOrThrow(this.path) : undefined,
    );
    const previous = this.handle;
    this.handle = handle;
    this.size = text.length;
    this.length = content.length;
    await previous.close().catch(() => undefined);
    await syncDirectory(dirname(this.path));
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
