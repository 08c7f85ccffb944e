import { readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { inject, injectable } from 'inversify';
import { AppError } from '../../domain/errors.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import type { Clock } from '../../application/ports/Clock.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { ProcessIdentity } from '../../application/ports/ProcessIdentity.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { WebhookInbox } from '../../application/ports/WebhookInbox.js';
import {
  describeFileSystemProblem,
  ensurePrivateDirectory,
  errnoCode,
  isDurableWriteTemporary,
  syncDirectory,
  writeFileDurably,
  CoalescingDirectorySync,
} from './fileSystem.js';

/** `<15-digit ms>-<6-digit counter>-<event id>.json`: the name sorts in acceptance order. */
const EVENT_FILE = /^\d{15}-\d{6}-.+\.json$/;
/** A temporary file older than this belongs to an accept that died before it answered. */
const ABANDONED_TEMPORARY_MS = 60_000;

/**
 * Accepted webhook events under `$AGENT_HOME/webhooks/inbox/` (decisions §7), one JSON file per
 * event, in three directories:
 *
 * - `queued/` — accepted, waiting; names sort in acceptance order;
 * - `claimed/<claimant>/` — being run by the process `<host>:<pid>` (URI-encoded); a claim is
 *   one atomic rename out of `queued/`, so two workers, in one process or in two, never get the
 *   same event, and no lock is needed;
 * - `damaged/` — files that are not events, moved aside so that they stop nobody.
 *
 * `accept` returns once the file and its directory entry are synced. A claimed event is removed
 * by `complete`; one whose claimant died (kill -9, power cut) goes back to `queued/` under its
 * old name, so its place in the order, when `recover` runs at the next start. Bind one instance
 * per process: an instance treats claims under its own claimant that it did not make as left by
 * an earlier process with the same pid.
 */
@injectable()
export class FileWebhookInbox implements WebhookInbox {
  private readonly queuedDir: string;
  private readonly claimedDir: string;
  private readonly damagedDir: string;
  private readonly ownClaimDir: string;
  /** Events this instance claimed and has not completed, by id, with where their file is. */
  private readonly claims = new Map<string, string>();
  /** Concurrent accepts and completions share directory fsyncs (one per batch, not per event). */
  private readonly directorySync = new CoalescingDirectorySync();
  private readonly ensured = new Set<string>();
  private lastMs = 0;
  private counter = 0;

  constructor(
    @inject(TOKENS.AgentPaths) private readonly paths: AgentPaths,
    @inject(TOKENS.ProcessIdentity) private readonly identity: ProcessIdentity,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {
    this.queuedDir = join(paths.webhookInboxDir, 'queued');
    this.claimedDir = join(paths.webhookInboxDir, 'claimed');
    this.damagedDir = join(paths.webhookInboxDir, 'damaged');
    this.ownClaimDir = join(this.claimedDir, encodeURIComponent(identity.claimant()));
  }

  /** Writes the event into `queued/` (0600, directories 0700) and syncs it. Throws WEBHOOK.INBOX_UNAVAILABLE. */
  async accept(event: WebhookEvent): Promise<void> {
    await this.guard('write', async () => {
      await this.ensureDirectory(this.queuedDir);
      await writeFileDurably(join(this.queuedDir, this.nextFileName(event.id)), `${JSON.stringify(event)}\n`, (directory) =>
        this.directorySync.request(directory),
      );
    });
  }

  /** Creates a directory once per instance; later calls cost nothing. */
  private async ensureDirectory(directory: string): Promise<void> {
    if (this.ensured.has(directory)) return;
    await ensurePrivateDirectory(directory);
    this.ensured.add(directory);
  }

  /**
   * Returns to `queued/` every claim whose claimant is gone: a process on this host that no
   * longer runs, or this very claimant (same host and pid, as after a container restart) for
   * events this instance never claimed. Claims of other hosts are left alone. Also removes
   * temporary files of accepts that died mid-write.
   */
  async recover(): Promise<number> {
    return this.guard('recover', async () => {
      await ensurePrivateDirectory(this.queuedDir);
      await this.removeAbandonedTemporaries();
      const claimedHere = new Set(this.claims.values());
      let returned = 0;
      for (const directory of await this.entries(this.claimedDir)) {
        const claimDir = join(this.claimedDir, directory);
        const own = claimDir === this.ownClaimDir;
        if (!own && this.identity.isAlive(decodeURIComponent(directory)) !== false) continue;
        for (const name of await this.entries(claimDir)) {
          if (claimedHere.has(join(claimDir, name))) continue;
          if (await this.move(join(claimDir, name), join(this.queuedDir, name))) returned += 1;
        }
        if (!own) await rmdir(claimDir).catch(() => undefined);
      }
      if (returned > 0) await syncDirectory(this.queuedDir);
      return returned;
    });
  }

  /**
   * Claims the oldest file of `queued/` by renaming it into this process's claim directory; a
   * file another worker renamed first is skipped. A file that is not an event is moved to
   * `damaged/`, logged, and the next one is tried.
   */
  async claimNext(): Promise<WebhookEvent | null> {
    return this.guard('claim from', async () => {
      for (const name of (await this.entries(this.queuedDir)).filter((entry) => EVENT_FILE.test(entry)).sort()) {
        const claimed = join(this.ownClaimDir, name);
        await this.ensureDirectory(this.ownClaimDir);
        if (!(await this.move(join(this.queuedDir, name), claimed))) continue;
        // No directory sync here: after a crash the file is found in queued/ or in the claim
        // directory, and recover() returns it to the queue either way.
        const event = await this.readEvent(claimed);
        if (event === null) continue;
        this.claims.set(event.id, claimed);
        return event;
      }
      return null;
    });
  }

  /** Removes the event's file wherever it is (claimed by anyone, or still queued); nothing when it is gone. */
  async complete(eventId: string): Promise<void> {
    await this.guard('complete in', async () => {
      const path = this.claims.get(eventId) ?? (await this.locate(eventId));
      if (path === null) return;
      await rm(path, { force: true });
      this.claims.delete(eventId);
      await this.directorySync.request(dirname(path));
    });
  }

  /** Files in `queued/` and in every claim directory. */
  async pending(): Promise<number> {
    return this.guard('read', async () => {
      let count = (await this.entries(this.queuedDir)).filter((name) => EVENT_FILE.test(name)).length;
      for (const directory of await this.entries(this.claimedDir)) {
        count += (await this.entries(join(this.claimedDir, directory))).length;
      }
      return count;
    });
  }

  /** Strictly increasing within this instance, in clock order across restarts. */
  private nextFileName(eventId: string): string {
    const ms = Math.max(this.clock.now().getTime(), this.lastMs);
    this.counter = ms === this.lastMs ? this.counter + 1 : 0;
    this.lastMs = ms;
    return `${String(ms).padStart(15, '0')}-${String(this.counter).padStart(6, '0')}-${encodeURIComponent(eventId)}.json`;
  }

  private async locate(eventId: string): Promise<string | null> {
    const suffix = `-${encodeURIComponent(eventId)}.json`;
    const directories = [this.queuedDir, ...(await this.entries(this.claimedDir)).map((name) => join(this.claimedDir, name))];
    for (const directory of directories) {
      const name = (await this.entries(directory)).find((entry) => EVENT_FILE.test(entry) && entry.endsWith(suffix));
      if (name) return join(directory, name);
    }
    return null;
  }

  /** The event in `path`, or null after moving a file that is not one to `damaged/`. */
  private async readEvent(path: string): Promise<WebhookEvent | null> {
    const text = await readFile(path, 'utf8');
    let problem: string | null;
    let event: unknown;
    try {
      event = JSON.parse(text);
      problem = eventProblem(event);
    } catch (error) {
      problem = `it is not valid JSON (${(error as Error).message})`;
    }
    if (problem === null) return event as WebhookEvent;
    await ensurePrivateDirectory(this.damagedDir);
    const aside = join(this.damagedDir, basename(path));
    await rename(path, aside);
    this.log.error(`webhook inbox: ${path} is not an accepted event: ${problem}; moved it to ${aside}`, { file: aside });
    return null;
  }

  private async removeAbandonedTemporaries(): Promise<void> {
    const now = this.clock.now().getTime();
    for (const name of (await this.entries(this.queuedDir)).filter(isDurableWriteTemporary)) {
      const path = join(this.queuedDir, name);
      const modified = await stat(path).then((info) => info.mtimeMs, () => now);
      if (now - modified > ABANDONED_TEMPORARY_MS) await rm(path, { force: true });
    }
  }

  /** Renames `from` to `to`; false when `from` is gone because another worker moved it first. */
  private async move(from: string, to: string): Promise<boolean> {
    try {
      await rename(from, to);
      return true;
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return false;
      throw error;
    }
  }

  /** Names in `directory`; none when it does not exist (yet). */
  private async entries(directory: string): Promise<string[]> {
    try {
      return await readdir(directory);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return [];
      throw error;
    }
  }

  private async guard<T>(action: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) throw error;
      const code = errnoCode(error);
      throw new AppError(
        'WEBHOOK.INBOX_UNAVAILABLE',
        `Cannot ${action} the webhook inbox ${this.paths.webhookInboxDir}: ${describeFileSystemProblem(code)} (${code ?? 'unknown error'}); make it a directory this user can write to, or set AGENT_HOME to one.`,
        { cause: error },
      );
    }
  }
}

/** What makes `value` not a stored WebhookEvent, or null when it is one. */
function eventProblem(value: unknown): string | null {
  if (!isJsonObject(value)) return 'it is not a JSON object';
  for (const field of ['id', 'route', 'event', 'deliveryId', 'receivedAt'] as const) {
    if (typeof value[field] !== 'string') return `its "${field}" is not a string`;
  }
  if (!isJsonObject(value.payload)) return 'its "payload" is not an object';
  return null;
}
