import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import type { EventOutbox, FailedEvent, OutboxEntry } from '../../application/ports/EventOutbox.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { OutboundEvent } from '../../domain/events/outboundEvents.js';
import { acquireFileLock, runInTurn } from './fileLock.js';
import {
  createFileDurablyOnce,
  ensurePrivateDirectory,
  errnoCode,
  isDurableWriteTemporary,
  namesInDirectory,
  removeFile,
  statOf,
  writeFileAtomically,
  writeFileDurably,
} from './fileSystem.js';

/** One entry's file, in `outbox/` while it waits and in `failed/` once given up on. */
interface EntryFile {
  subscription: string;
  event: OutboundEvent;
  created_at: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: string;
  /** Claimed by a sender until then (ISO 8601 UTC); null when not claimed. */
  claimed_until: string | null;
  failed_at?: string;
}

/**
 * The events out under `$AGENT_HOME/events/`: a file per waiting entry in `outbox/`, named by
 * its subscription and event id, and one per entry given up on in `failed/`. A new entry is
 * created whole and synced before `add` resolves (`createFileDurablyOnce`, which never replaces a
 * file, so an event added twice is kept once). Every change is made under the kernel lock
 * `events/.lock` (fileLock.ts: the lock's file is kept referenced until it is released
 * explicitly), so the claims of two gateways on one home never overlap. A claim is written
 * without a sync: lost in a power cut, it only lets the event be sent once more.
 *
 * `claimDue` reads every waiting entry: the outbox holds what waits for its receiver, a handful
 * in normal times; a receiver down for a day at a hundred runs an hour is some thousands of small
 * files read once a second by one gateway.
 */
@injectable()
export class FileEventOutbox implements EventOutbox {
  private readonly root: string;
  private readonly waiting: string;
  private readonly given: string;
  private readonly lockPath: string;

  constructor(@inject(TOKENS.AgentPaths) paths: AgentPaths) {
    this.root = join(paths.home, 'events');
    this.waiting = join(this.root, 'outbox');
    this.given = join(this.root, 'failed');
    this.lockPath = join(this.root, '.lock');
  }

  async add(entries: readonly { subscription: string; event: OutboundEvent }[], now: Date): Promise<void> {
    if (entries.length === 0) return;
    await this.locked(async () => {
      for (const { subscription, event } of entries) {
        const name = fileNameOf(subscription, event.id);
        if (statOf(join(this.given, name)).ok) continue;
        const file: EntryFile = {
          subscription,
          event,
          created_at: now.toISOString(),
          attempts: 0,
          last_error: null,
          next_attempt_at: now.toISOString(),
          claimed_until: null,
        };
        await createFileDurablyOnce(join(this.waiting, name), JSON.stringify(file));
      }
    });
  }

  async claimDue(now: Date, limit: number, leaseMs: number): Promise<OutboxEntry[]> {
    if (!statOf(this.waiting).ok) return [];
    return this.locked(async () => {
      const due = (await this.read(this.waiting)).filter(
        (file) =>
          Date.parse(file.next_attempt_at) <= now.getTime() &&
          (file.claimed_until === null || Date.parse(file.claimed_until) <= now.getTime()),
      );
      due.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
      const claimed = due.slice(0, limit);
      const until = new Date(now.getTime() + leaseMs).toISOString();
      for (const file of claimed) {
        await writeFileAtomically(
          join(this.waiting, fileNameOf(file.subscription, file.event.id)),
          JSON.stringify({ ...file, claimed_until: until }),
        );
      }
      return claimed.map((file) => ({
        subscription: file.subscription,
        event: file.event,
        createdAt: new Date(file.created_at),
        attempts: file.attempts,
        lastError: file.last_error,
      }));
    });
  }

  async sent(subscription: string, eventId: string): Promise<void> {
    await this.locked(() => removeFile(join(this.waiting, fileNameOf(subscription, eventId))));
  }

  async retryAt(subscription: string, eventId: string, next: Date, error: string): Promise<void> {
    await this.locked(async () => {
      const path = join(this.waiting, fileNameOf(subscription, eventId));
      const file = await readEntry(path);
      if (file === null) return;
      const changed: EntryFile = {
        ...file,
        attempts: file.attempts + 1,
        last_error: error,
        next_attempt_at: next.toISOString(),
        claimed_until: null,
      };
      await writeFileAtomically(path, JSON.stringify(changed));
    });
  }

  async giveUp(subscription: string, eventId: string, error: string, at: Date): Promise<void> {
    await this.locked(async () => {
      const name = fileNameOf(subscription, eventId);
      const file = await readEntry(join(this.waiting, name));
      if (file === null) return;
      const failed: EntryFile = {
        ...file,
        attempts: file.attempts + 1,
        last_error: error,
        claimed_until: null,
        failed_at: at.toISOString(),
      };
      await ensurePrivateDirectory(this.given);
      await writeFileDurably(join(this.given, name), JSON.stringify(failed));
      await removeFile(join(this.waiting, name));
    });
  }

  async failed(limit: number): Promise<FailedEvent[]> {
    const files = await this.read(this.given);
    return files
      .map((file) => ({
        subscription: file.subscription,
        event: file.event,
        createdAt: new Date(file.created_at),
        failedAt: new Date(file.failed_at ?? file.created_at),
        attempts: file.attempts,
        error: file.last_error ?? 'unknown',
      }))
      .sort((a, b) => b.failedAt.getTime() - a.failedAt.getTime())
      .slice(0, limit);
  }

  async resend(subscription: string, eventId: string, now: Date): Promise<boolean> {
    return this.locked(async () => {
      const name = fileNameOf(subscription, eventId);
      const file = await readEntry(join(this.given, name));
      if (file === null) return false;
      const { failed_at: _failedAt, ...rest } = file;
      const waiting: EntryFile = {
        ...rest,
        attempts: 0,
        created_at: now.toISOString(),
        next_attempt_at: now.toISOString(),
        claimed_until: null,
      };
      // Waiting again before it leaves the failed list: a crash between the two keeps it in both, never in neither.
      await writeFileDurably(join(this.waiting, name), JSON.stringify(waiting));
      await removeFile(join(this.given, name));
      return true;
    });
  }

  async failedCount(): Promise<number> {
    return (await namesInDirectory(this.given)).filter((name) => name.endsWith('.json') && !isDurableWriteTemporary(name)).length;
  }

  /** Every entry file of `directory` that can be read; none when it does not exist. */
  private async read(directory: string): Promise<EntryFile[]> {
    const names = (await namesInDirectory(directory)).filter((name) => name.endsWith('.json') && !isDurableWriteTemporary(name));
    const files = await Promise.all(names.map((name) => readEntry(join(directory, name))));
    return files.filter((file): file is EntryFile => file !== null);
  }

  private locked<T>(change: () => Promise<T>): Promise<T> {
    return runInTurn(this.lockPath, async () => {
      await ensurePrivateDirectory(this.root);
      await ensurePrivateDirectory(this.waiting);
      const lock = await acquireFileLock(this.lockPath);
      try {
        return await change();
      } finally {
        await lock.release();
      }
    });
  }
}

/** An entry's file name: its subscription (a route-like name, no dots) and its event id, escaped. */
function fileNameOf(subscription: string, eventId: string): string {
  return `${subscription}.${encodeURIComponent(eventId)}.json`;
}

/** The entry at `path`; null when it is gone, or torn (never: entries are written whole). */
async function readEntry(path: string): Promise<EntryFile | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as EntryFile;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || error instanceof SyntaxError) return null;
    throw error;
  }
}
