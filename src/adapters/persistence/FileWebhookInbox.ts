import { appendFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError, WebhookError } from '../../domain/errors.js';
import { DeliveryMemory } from '../../domain/webhook/DeliveryMemory.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import type { Clock } from '../../application/ports/Clock.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { OrphanProcesses } from '../../application/ports/OrphanProcesses.js';
import type { ProcessIdentity } from '../../application/ports/ProcessIdentity.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { WebhookInbox } from '../../application/ports/WebhookInbox.js';
import {
  describeFileSystemProblem,
  ensurePrivateDirectory,
  errnoCode,
  isDurableWriteTemporary,
  namesInDirectory,
  PRIVATE_FILE_MODE,
} from './fileSystem.js';
import { GroupCommitLog, LogInUse } from './GroupCommitLog.js';
import { InboxJournalAdoption, lockJournal, type LockedJournal, type Segment } from './InboxJournalAdoption.js';
import { readLegacyLayout, removeLegacyLayout } from './legacyInboxLayout.js';
import {
  acceptRecord,
  claimRecord,
  doneRecord,
  eventOfAcceptRecord,
  journalName,
  journalOwner,
  JournalReader,
  seenRecord,
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
/**
 * Slack kept at the end of the journal (see GroupCommitLog): the claim and done records of the
 * runs under way are written into it, so a full disk cannot keep a run's end from being recorded.
 */
const SLACK_BYTES = 64 * 1024;

/** An event accepted and not done, as this instance holds it. */
interface LiveEvent {
  /**
   * Its accept record, as written: the event is parsed from it when it is handed out. Kept as
   * bytes outside the JavaScript heap, so that a backlog of events costs the garbage collector
   * nothing (as strings, every young-generation collection copied them).
   */
  record: Buffer;
  /** Its route, so that a claim may pass over the events of some routes. */
  route: string;
  claimed: boolean;
  /** Its claim record is on disk: only its done record still needs room. */
  claimWritten?: boolean;
  /** The journal its accept record is in when that is not this process's own. */
  segment: Segment | null;
}

/**
 * Accepted webhook events under `$AGENT_HOME/webhooks/inbox/` (docs/webhooks.md), kept as an
 * append-only journal per process (format in webhookJournal.ts):
 *
 * - `accept` appends the event's record and returns once it is on disk. Appends arriving while a
 *   write is under way go out together with one sync (GroupCommitLog), so a busy listener pays
 *   a share of one sync per event. A delivery the sender named is stored once an hour at most:
 *   its key is in the record, and the keys of the last hour are read back at start (a journal
 *   rewrite keeps those of finished events as `seen` records).
 * - Claims are made in memory (the journal has one writer, this process, so no two workers can
 *   take the same event) and noted in the journal without waiting for the disk; `complete`
 *   appends a `done` record and waits for it. Both go into slack kept at the end of the journal,
 *   and an event is handed out only while the slack holds the records of every run under way
 *   and its own: on a full disk no run starts whose end could not be recorded.
 * - When the journal has grown past 4 MiB and is mostly records of finished events, it is
 *   rewritten with the live ones only, before the next append, provided they are at most 1 MiB.
 *
 * The journals of dead processes are taken over on first use and at every `recover()`
 * (InboxJournalAdoption.ts): each is locked and renamed into this process's name, and its pending
 * events are held from it where it lies; it is removed once its events are done. A journal under
 * this process's own claimant (an earlier process with the same host and pid, as after a
 * container restart) is continued in place. The inbox's earlier layout (one file per event,
 * legacyInboxLayout.ts) is read once and moved in. A line that is no record is copied to
 * `damaged/`, logged, and skipped.
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
  /** Slack the claim and done records of the runs under way may need. */
  private reservedBytes = 0;
  private readonly segments = new Set<Segment>();
  /** The segments a planned rewrite of the journal holds the events of. */
  private segmentsBeingCompacted = new Set<Segment>();
  private deliveries = new DeliveryMemory();
  private opening: Promise<GroupCommitLog> | null = null;
  /** Claims left by an earlier process under this claimant, reported by the first `recover()`. */
  private unreportedClaims = 0;
  private readonly adoption: InboxJournalAdoption;
  private recovering: Promise<number> | null = null;
  private readonly removals = new Set<Promise<void>>();
  private diskFullReported = false;

  constructor(
    @inject(TOKENS.AgentPaths) private readonly paths: AgentPaths,
    @inject(TOKENS.ProcessIdentity) private readonly identity: ProcessIdentity,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.OrphanProcesses) orphans: OrphanProcesses,
  ) {
    this.directory = paths.webhookInboxDir;
    this.damagedDir = join(this.directory, 'damaged');
    this.claimant = identity.claimant();
    this.adoption = new InboxJournalAdoption(this.directory, this.claimant, clock, orphans, log);
  }

  /**
   * Appends the event's accept record and waits until it is synced; false (storing nothing) when
   * `deliveryKey` was accepted within the hour. Throws WEBHOOK.INBOX_UNAVAILABLE.
   */
  async accept(event: WebhookEvent, payloadJson?: string, deliveryKey?: string): Promise<boolean> {
    return this.guard('write', async () => {
      const journal = await this.journal();
      if (deliveryKey !== undefined && !this.deliveries.remember(deliveryKey, this.clock.now().getTime())) return false;
      try {
        await journal.append(acceptRecord(event, payloadJson, deliveryKey), true, (record) => this.hold(event.id, event.route, record, false, null));
      } catch (error) {
        // Not stored, so not accepted: a retry of this delivery must get through.
        if (deliveryKey !== undefined) this.deliveries.forget(deliveryKey);
        throw error;
      }
      return true;
    });
  }

  /**
   * Takes over the journals of dead processes; returns how many events whose runs those
   * processes (or an earlier process under this claimant) had started are waiting again.
   * Calls made while one runs share it.
   */
  recover(): Promise<number> {
    this.recovering ??= this.guard('recover', async () => {
      await this.journal();
      const returned = this.unreportedClaims + (await this.takeOverJournalsOfDead());
      this.unreportedClaims = 0;
      return returned;
    }).finally(() => {
      this.recovering = null;
    });
    return this.recovering;
  }

  /** The oldest event not claimed, now claimed; null when none is waiting or its end could not be recorded. */
  async claimNext(skipRoutes?: ReadonlySet<string>): Promise<WebhookEvent | null> {
    return this.guard('claim from', async () => {
      const journal = await this.journal();
      for (const [id, event] of this.live) {
        if (event.claimed || skipRoutes?.has(event.route)) continue;
        const room = recordRoom(id);
        if (!(await this.slackFor(journal, room))) return null;
        if (event.claimed) continue;
        event.claimed = true;
        this.reservedBytes += room;
        // Losing this note costs nothing: after a crash the event runs again either way.
        const claim = claimRecord(id);
        journal
          .append(
            claim,
            false,
            () => {
              event.claimWritten = true;
              this.reservedBytes -= Buffer.byteLength(claim);
            },
            true,
          )
          .catch(() => undefined);
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
      await journal.append(
        doneRecord(eventId),
        true,
        () => {
          if (this.live.get(eventId) !== event) return;
          this.live.delete(eventId);
          this.liveBytes -= event.record.length;
          if (event.claimed) this.reservedBytes -= event.claimWritten ? Buffer.byteLength(doneRecord(eventId)) : recordRoom(eventId);
          if (event.segment !== null) this.segmentEventDone(event.segment);
        },
        true,
      );
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
    await this.recovering?.catch(() => undefined);
    const journal = await opening?.catch(() => null);
    await journal?.close();
    await Promise.all(this.removals);
    for (const segment of this.segments) await segment.handle.close().catch(() => undefined);
    this.segments.clear();
  }

  /** Whether the journal's slack holds `room` more bytes besides what the runs under way need; reported once when it does not. */
  private async slackFor(journal: GroupCommitLog, room: number): Promise<boolean> {
    if (journal.spareBytes() < this.reservedBytes + room) await journal.refillSlack();
    const enough = journal.spareBytes() >= this.reservedBytes + room;
    if (!enough && !this.diskFullReported) {
      this.log.error(
        `webhook inbox: the disk holding ${this.directory} is full; no webhook event starts until there is room to record its end (accepted events wait)`,
      );
    }
    this.diskFullReported = !enough;
    return enough;
  }

  private hold(id: string, route: string, record: Buffer, claimed: boolean, segment: Segment | null): void {
    this.live.set(id, { record, route, claimed, segment });
    this.liveBytes += record.length;
    if (segment !== null) segment.live += 1;
    if (claimed) this.reservedBytes += recordRoom(id);
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
    this.reservedBytes = 0;
    this.deliveries = new DeliveryMemory();
    await ensurePrivateDirectory(this.directory);
    const names = await namesInDirectory(this.directory);
    await this.removeAbandonedTemporaries(names);
    const ownPath = join(this.directory, journalName(this.claimant));
    const earlierParts = names
      .filter((name) => journalOwner(name) === this.claimant && join(this.directory, name) !== ownPath)
      .map((name) => join(this.directory, name));
    const parts: LockedJournal[] = [];
    let journal: GroupCommitLog | null = null;
    try {
      for (const path of earlierParts) {
        const part = await lockJournal(path);
        this.segments.add(part.segment);
        parts.push(part);
      }
      const opened = await GroupCommitLog.open(ownPath, {
        lock: true,
        reserveBytes: SLACK_BYTES,
        protectedBytes: () => this.reservedBytes,
        compaction: (fileBytes) => this.compactionPlan(fileBytes),
        onCompacted: () => this.compacted(),
      });
      journal = opened.log;
      const earlier = await readLegacyLayout(
        this.directory,
        this.damagedDir,
        (claimant) => claimant === this.claimant || this.identity.isAlive(claimant) === false,
        this.log,
      );
      const state = await this.readJournals(
        [{ path: ownPath, records: opened.records, torn: opened.torn }, ...parts.map((part) => ({ path: part.segment.path, records: part.records, torn: part.torn }))],
        earlier.events,
      );
      const bySource = new Map(parts.map((part) => [part.segment.path, part.segment]));
      for (const entry of state.entries) {
        const record = Buffer.from(entry.line, 'utf8');
        if (entry.source === null) {
          // From the earlier layout: moved into the journal.
          await journal.append(entry.line, true);
        }
        this.hold(entry.event.id, entry.event.route, record, false, entry.source === null ? null : (bySource.get(entry.source) ?? null));
      }
      this.unreportedClaims = state.entries.filter((entry) => entry.claimed).length;
      this.seedDeliveries(state);
      for (const part of parts) this.keepOrRemove(part.segment);
      await removeLegacyLayout(this.directory, earlier.files);
      // What dead processes left is part of the inbox from the first use on: their events, and
      // the deliveries they accepted.
      this.unreportedClaims += await this.takeOverJournalsOfDead();
      return journal;
    } catch (error) {
      await journal?.close().catch(() => undefined);
      for (const part of parts) await part.segment.handle.close().catch(() => undefined);
      this.segments.clear();
      if (error instanceof LogInUse) throw this.inUse(error.path);
      throw error;
    }
  }

  /**
   * Takes over the journals of dead processes (InboxJournalAdoption) and holds their pending
   * events; returns how many of those had been claimed.
   */
  private async takeOverJournalsOfDead(): Promise<number> {
    let returned = 0;
    const taken = await this.adoption.adoptDeadJournals(this.segments);
    if (taken.length === 0) return returned;
    const state = await this.readJournals(taken.map((part) => ({ path: part.segment.path, records: part.records, torn: part.torn })));
    const bySource = new Map(taken.map((part) => [part.segment.path, part.segment]));
    for (const entry of state.entries) {
      if (this.live.has(entry.event.id)) continue;
      this.hold(entry.event.id, entry.event.route, Buffer.from(entry.line, 'utf8'), false, bySource.get(entry.source ?? '') ?? null);
      if (entry.claimed) returned += 1;
    }
    this.seedDeliveries(state);
    for (const part of taken) this.keepOrRemove(part.segment);
    return returned;
  }

  private inUse(path: string): AppError {
    return new WebhookError(
      ERROR_CODES.WEBHOOK.INBOX_UNAVAILABLE,
      `The webhook inbox journal ${path} is in use by another running process with this host name and process id; give each gateway its own AGENT_HOME or host name.`,
    );
  }

  /** The delivery keys of the last hour found in journals, remembered again. */
  private seedDeliveries(state: JournalState): void {
    const now = this.clock.now().getTime();
    for (const { key, atMs } of state.deliveries) {
      if (now - atMs < 60 * 60 * 1000 && atMs <= now) this.deliveries.remember(key, atMs);
    }
  }

  private segmentEventDone(segment: Segment): void {
    segment.live -= 1;
    this.keepOrRemove(segment);
  }

  /** Removes a segment none of whose events is pending any more (its done records are on disk). */
  private keepOrRemove(segment: Segment): void {
    if (segment.live > 0 || !this.segments.has(segment)) return;
    this.segments.delete(segment);
    const removal = (async () => {
      await rm(segment.path, { force: true }).catch(() => undefined);
      await segment.handle.close().catch(() => undefined);
    })();
    this.removals.add(removal);
    void removal.finally(() => this.removals.delete(removal));
  }

  private compactionPlan(fileBytes: number): Buffer | null {
    if (!(fileBytes > COMPACT_AT_BYTES && this.liveBytes <= COMPACT_LIVE_MAX_BYTES && this.liveBytes * 2 < fileBytes)) return null;
    this.segmentsBeingCompacted = new Set(this.segments);
    return this.liveRecords();
  }

  /** The rewritten journal holds the events of the segments it was planned with: they go. */
  private compacted(): void {
    const covered = this.segmentsBeingCompacted;
    this.segmentsBeingCompacted = new Set();
    for (const event of this.live.values()) {
      if (event.segment !== null && covered.has(event.segment)) {
        event.segment.live -= 1;
        event.segment = null;
      }
    }
    for (const segment of covered) this.keepOrRemove(segment);
  }

  /** The records that say everything this instance holds, for a compacted journal. */
  private liveRecords(): Buffer {
    const chunks: Buffer[] = [];
    for (const { key, atMs } of this.deliveries.recent(this.clock.now().getTime())) chunks.push(Buffer.from(seenRecord(key, atMs), 'utf8'));
    for (const [id, event] of this.live) {
      chunks.push(event.record);
      if (event.claimed) chunks.push(Buffer.from(claimRecord(id), 'utf8'));
    }
    return Buffer.concat(chunks);
  }

  /** Reads journals and loose events together, sets damaged lines aside and reports torn ends. */
  private async readJournals(
    journals: Array<{ path: string; records: Buffer; torn: boolean }>,
    extra: Array<{ event: WebhookEvent; claimed: boolean }> = [],
  ): Promise<JournalState> {
    const reader = new JournalReader();
    for (const journal of journals) reader.read(journal.path, journal.records.toString('utf8'));
    for (const { event, claimed } of extra) reader.addEvent(event, claimed);
    const state = reader.state();
    for (const journal of journals.filter((each) => each.torn)) {
      this.log.warn(`webhook inbox: ${journal.path} ends in a record cut short (a write interrupted before it was acknowledged); it is ignored`);
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

  private async removeAbandonedTemporaries(names: string[]): Promise<void> {
    const now = this.clock.now().getTime();
    for (const name of names.filter(isDurableWriteTemporary)) {
      const path = join(this.directory, name);
      const modified = await stat(path).then((info) => info.mtimeMs, () => now);
      if (now - modified > ABANDONED_TEMPORARY_MS) await rm(path, { force: true });
    }
  }

  private async guard<T>(action: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) throw error;
      const code = errnoCode(error);
      throw new WebhookError(
        ERROR_CODES.WEBHOOK.INBOX_UNAVAILABLE,
        `Cannot ${action} the webhook inbox ${this.paths.webhookInboxDir}: ${describeFileSystemProblem(code)} (${code ?? 'unknown error'}); make it a directory this user can write to, or set AGENT_HOME to one.`,
        { cause: error },
      );
    }
  }
}

/** The claim and done records of an event, which the slack must have room for while it runs. */
function recordRoom(eventId: string): number {
  return Buffer.byteLength(claimRecord(eventId)) + Buffer.byteLength(doneRecord(eventId));
}
