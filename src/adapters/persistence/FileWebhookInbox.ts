import { appendFile, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import { AppError } from '../../domain/errors.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
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
  PRIVATE_FILE_MODE,
  syncDirectory,
} from './fileSystem.js';
import { GroupCommitLog } from './GroupCommitLog.js';
import {
  acceptRecord,
  claimRecord,
  doneRecord,
  eventOfAcceptRecord,
  eventProblem,
  journalName,
  journalOwner,
  JournalReader,
  type JournalState,
} from './webhookJournal.js';

/** A temporary file older than this belongs to a process that died while it wrote it. */
const ABANDONED_TEMPORARY_MS = 60_000;
/** The journal is rewritten with only its live records once it is this large and mostly dead records… */
const COMPACT_AT_BYTES = 4 * 1024 * 1024;
/**
 * …and its live records are at most this many bytes: a rewrite holds up every append while it
 * runs, so while a backlog is larger the journal grows instead, and is rewritten once the
 * worker has caught up.
 */
const COMPACT_LIVE_MAX_BYTES = 1024 * 1024;

/** An event accepted and not done, as this instance holds it. */
interface LiveEvent {
  /**
   * Its accept record, as written: the event is parsed from it when it is handed out. Kept as
   * bytes outside the JavaScript heap, so that a backlog of events costs the garbage collector
   * nothing (as strings, every young-generation collection copied them).
   */
  record: Buffer;
  claimed: boolean;
}

/**
 * Accepted webhook events under `$AGENT_HOME/webhooks/inbox/` (decisions §7), kept as an
 * append-only journal per process (format in webhookJournal.ts):
 *
 * - `accept` appends the event's record and returns once it is on disk. Appends arriving while a
 *   write is under way go out together with one `fdatasync` (GroupCommitLog), so a busy
 *   listener pays a share of one sync per event, not a file, a sync and a directory sync each.
 * - Claims are made in memory (the journal has one writer, this process, so no two workers can
 *   take the same event) and noted in the journal without waiting for the disk; `complete`
 *   appends a `done` record and waits for it.
 * - When the journal has grown past 4 MiB and is mostly records of finished events, it is
 *   rewritten with the live ones only, before the next append, provided they are at most 1 MiB
 *   (a rewrite holds up the appends while it runs; a larger backlog waits for the worker).
 *
 * Taking over what others left: on first use an instance reads the journals under its own
 * claimant (an earlier process with the same host and pid, as after a container restart) and
 * the inbox's earlier layout (one file per event in `queued/` and `claimed/<claimant>/`), and
 * starts a fresh journal holding the events none of them marked done. `recover()` also takes
 * over the journals of dead processes on this host: each is renamed into this process's name
 * first (a rename succeeds for one taker only), its pending events are appended here, then it
 * is removed. Journals of other hosts are left alone: whether their process lives cannot be
 * told. A line that is no record is copied to `damaged/`, logged, and skipped.
 *
 * Everything not done is held in memory (as its accept record) until it is done. Bind one
 * instance per process.
 */
@injectable()
export class FileWebhookInbox implements WebhookInbox {
  private readonly directory: string;
  private readonly damagedDir: string;
  private readonly claimant: string;
  /** Accepted and not done, in acceptance order. */
  private readonly live = new Map<string, LiveEvent>();
  private liveBytes = 0;
  private opening: Promise<GroupCommitLog> | null = null;
  /** Claims left by an earlier process under this claimant, reported by the first `recover()`. */
  private unreportedClaims = 0;
  private adoptions = 0;

  constructor(
    @inject(TOKENS.AgentPaths) private readonly paths: AgentPaths,
    @inject(TOKENS.ProcessIdentity) private readonly identity: ProcessIdentity,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {
    this.directory = paths.webhookInboxDir;
    this.damagedDir = join(this.directory, 'damaged');
    this.claimant = identity.claimant();
  }

  /** Appends the event's accept record and waits until it is synced. Throws WEBHOOK.INBOX_UNAVAILABLE. */
  async accept(event: WebhookEvent, payloadJson?: string): Promise<void> {
    await this.guard('write', async () => {
      const journal = await this.journal();
      await journal.append(acceptRecord(event, payloadJson), true, (record) => this.hold(event.id, record));
    });
  }

  /**
   * Takes over the journals of processes on this host that are gone; returns how many events
   * whose runs those processes (or an earlier process under this claimant) had started are
   * waiting again.
   */
  async recover(): Promise<number> {
    return this.guard('recover', async () => {
      const journal = await this.journal();
      let returned = this.unreportedClaims;
      this.unreportedClaims = 0;
      const adopted = await this.adoptJournalsOfGone();
      if (adopted.length === 0) return returned;
      const { entries } = await this.readJournals({ paths: adopted });
      const fresh = entries.filter((entry) => !this.live.has(entry.event.id));
      if (fresh.length > 0) {
        await Promise.all(fresh.map((entry) => journal.append(entry.line, true, (record) => this.hold(entry.event.id, record))));
      }
      returned += fresh.filter((entry) => entry.claimed).length;
      await this.removeAll(adopted);
      return returned;
    });
  }

  /** The oldest event not claimed, now claimed; null when none is waiting. */
  async claimNext(): Promise<WebhookEvent | null> {
    return this.guard('claim from', async () => {
      const journal = await this.journal();
      for (const [id, event] of this.live) {
        if (event.claimed) continue;
        event.claimed = true;
        // Losing this note costs nothing: after a crash the event runs again either way.
        journal.append(claimRecord(id), false).catch(() => undefined);
        return eventOfAcceptRecord(event.record.toString('utf8'));
      }
      return null;
    });
  }

  /** Appends the event's done record and waits for it; nothing for an id this inbox does not hold. */
  async complete(eventId: string): Promise<void> {
    await this.guard('complete in', async () => {
      const journal = await this.journal();
      const event = this.live.get(eventId);
      if (!event) return;
      await journal.append(doneRecord(eventId), true, () => {
        if (this.live.delete(eventId)) this.liveBytes -= event.record.length;
      });
    });
  }

  /** Events accepted (or taken over) and not done, claimed or not. */
  async pending(): Promise<number> {
    return this.guard('read', async () => {
      await this.journal();
      return this.live.size;
    });
  }

  /** Waits for the journal's writes under way and closes it; a later call starts afresh from the files. */
  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = null;
    const journal = await opening?.catch(() => null);
    await journal?.close();
  }

  /** Called once the event's accept record is on disk (never before: compaction writes what is held). */
  private hold(id: string, record: Buffer): void {
    this.live.set(id, { record, claimed: false });
    this.liveBytes += record.length;
  }

  /** This process's journal, started on first use from what earlier processes under this claimant left. */
  private journal(): Promise<GroupCommitLog> {
    this.opening ??= this.start().catch((error: unknown) => {
      this.opening = null;
      throw error;
    });
    return this.opening;
  }

  private async start(): Promise<GroupCommitLog> {
    this.live.clear();
    this.liveBytes = 0;
    await ensurePrivateDirectory(this.directory);
    const names = await this.entries(this.directory);
    await this.removeAbandonedTemporaries(names);
    const own = names.filter((name) => journalOwner(name) === this.claimant).map((name) => join(this.directory, name));
    const earlier = await this.earlierLayout();
    const { entries } = await this.readJournals({ paths: own, extra: earlier.events });
    const ownPath = join(this.directory, journalName(this.claimant));
    const records = entries.map((entry) => Buffer.from(entry.line, 'utf8'));
    const journal = await GroupCommitLog.create(ownPath, Buffer.concat(records), (fileBytes) =>
      fileBytes > COMPACT_AT_BYTES && this.liveBytes <= COMPACT_LIVE_MAX_BYTES && this.liveBytes * 2 < fileBytes ? this.liveRecords() : null,
    );
    entries.forEach((entry, index) => this.hold(entry.event.id, records[index]!));
    this.unreportedClaims = entries.filter((entry) => entry.claimed).length;
    await this.removeAll([...own.filter((path) => path !== ownPath), ...earlier.files]);
    if (earlier.files.length > 0) await this.removeEarlierLayoutDirectories();
    return journal;
  }

  /** The records that say everything this instance holds, for a compacted journal. */
  private liveRecords(): Buffer {
    const chunks: Buffer[] = [];
    for (const [id, event] of this.live) {
      chunks.push(event.record);
      if (event.claimed) chunks.push(Buffer.from(claimRecord(id), 'utf8'));
    }
    return Buffer.concat(chunks);
  }

  /**
   * Renames every journal of a process on this host that is gone into this process's name
   * (a journal someone else renamed first is skipped) and returns the new paths.
   */
  private async adoptJournalsOfGone(): Promise<string[]> {
    const paths: string[] = [];
    for (const name of await this.entries(this.directory)) {
      const owner = journalOwner(name);
      if (owner === null || owner === this.claimant || this.identity.isAlive(owner) !== false) continue;
      this.adoptions += 1;
      const adopted = join(this.directory, journalName(this.claimant, `${this.clock.now().getTime()}-${this.adoptions}`));
      try {
        await rename(join(this.directory, name), adopted);
        paths.push(adopted);
      } catch (error) {
        if (errnoCode(error) !== 'ENOENT') throw error;
      }
    }
    return paths;
  }

  /** Reads journals and loose events together, sets damaged lines aside and reports torn ends. */
  private async readJournals(sources: { paths: string[]; extra?: Array<{ event: WebhookEvent; claimed: boolean }> }): Promise<JournalState> {
    const reader = new JournalReader();
    for (const path of sources.paths) reader.read(path, await readFile(path, 'utf8'));
    for (const { event, claimed } of sources.extra ?? []) reader.addEvent(event, claimed);
    const state = reader.state();
    for (const source of state.torn) {
      this.log.warn(`webhook inbox: ${source} ends in a record cut short (a write interrupted before it was acknowledged); it is ignored`);
    }
    for (const damaged of state.damaged) {
      await ensurePrivateDirectory(this.damagedDir);
      const aside = join(this.damagedDir, `${damaged.source.slice(this.directory.length + 1)}.lines`);
      await appendFile(aside, `${damaged.line}\n`, { mode: PRIVATE_FILE_MODE });
      this.log.error(`webhook inbox: line ${damaged.lineNumber} of ${damaged.source} is not an inbox record: ${damaged.problem}; copied it to ${aside}`, {
        file: aside,
      });
    }
    return state;
  }

  /**
   * Events in the inbox's earlier layout (one JSON file per event in `queued/`, and in
   * `claimed/<claimant>/` for those whose run had started), in acceptance order: those that are
   * not waiting on a live process of this host. A file that is no event is moved to `damaged/`.
   */
  private async earlierLayout(): Promise<{ events: Array<{ event: WebhookEvent; claimed: boolean }>; files: string[] }> {
    const found: Array<{ name: string; path: string; claimed: boolean }> = [];
    const queued = join(this.directory, 'queued');
    for (const name of await this.entries(queued)) found.push({ name, path: join(queued, name), claimed: false });
    const claimedDir = join(this.directory, 'claimed');
    for (const directory of await this.entries(claimedDir)) {
      const claimant = decodeURIComponent(directory);
      if (claimant !== this.claimant && this.identity.isAlive(claimant) !== false) continue;
      for (const name of await this.entries(join(claimedDir, directory))) {
        found.push({ name, path: join(claimedDir, directory, name), claimed: true });
      }
    }
    const events: Array<{ event: WebhookEvent; claimed: boolean }> = [];
    const files: string[] = [];
    for (const file of found.sort((a, b) => a.name.localeCompare(b.name))) {
      if (isDurableWriteTemporary(file.name)) {
        files.push(file.path);
        continue;
      }
      const text = await readFile(file.path, 'utf8');
      let problem: string | null;
      let event: unknown;
      try {
        event = JSON.parse(text);
        problem = eventProblem(event);
      } catch (error) {
        problem = `it is not valid JSON (${(error as Error).message})`;
      }
      if (problem === null) {
        events.push({ event: event as WebhookEvent, claimed: file.claimed });
        files.push(file.path);
      } else {
        await ensurePrivateDirectory(this.damagedDir);
        const aside = join(this.damagedDir, file.name);
        await rename(file.path, aside);
        this.log.error(`webhook inbox: ${file.path} is not an accepted event: ${problem}; moved it to ${aside}`, { file: aside });
      }
    }
    return { events, files };
  }

  /** Removes files whose content is now in this process's journal. */
  private async removeAll(paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    for (const path of paths) await rm(path, { force: true });
    await syncDirectory(this.directory);
  }

  /** The directories of the earlier layout, where empty (a live process's claims stay). */
  private async removeEarlierLayoutDirectories(): Promise<void> {
    const claimedDir = join(this.directory, 'claimed');
    for (const claimant of await this.entries(claimedDir)) await rmdir(join(claimedDir, claimant)).catch(() => undefined);
    for (const directory of [claimedDir, join(this.directory, 'queued')]) await rmdir(directory).catch(() => undefined);
  }

  private async removeAbandonedTemporaries(names: string[]): Promise<void> {
    const now = this.clock.now().getTime();
    for (const name of names.filter(isDurableWriteTemporary)) {
      const path = join(this.directory, name);
      const modified = await stat(path).then((info) => info.mtimeMs, () => now);
      if (now - modified > ABANDONED_TEMPORARY_MS) await rm(path, { force: true });
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
