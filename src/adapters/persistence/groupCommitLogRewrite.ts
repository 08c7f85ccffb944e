import { constants } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { PRIVATE_FILE_MODE, temporaryPathFor } from './fileSystem.js';
import { NEWLINE } from './groupCommitLogFile.js';
import { CHUNK_BYTES, type RecordFile } from './journalLines.js';

/**
 * The rewrite of a group commit log's file (GroupCommitLog.ts) with its live content: what the
 * log asks of its owner, and the new file the owner's content is written into beside the log.
 */

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

/**
 * The file a rewrite builds beside the log: written in chunks of CHUNK_BYTES (so a rewrite holds
 * one chunk however large the backlog), synced, locked and renamed over the log by `finish`.
 */
export class NewLogFile implements RewriteTarget {
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
    for (let position = start; position < end;) {
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
