import { appendFile, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError, WebhookError } from '../../domain/errors.js';
import { DELIVERY_MEMORY_ENTRIES, DELIVERY_MEMORY_MS, DeliveryMemory } from '../../domain/webhook/DeliveryMemory.js';
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
import { GroupCommitLog } from './GroupCommitLog.js';
import { LogInUse } from './groupCommitLogFile.js';
import type { Rewrite, RewriteTarget } from './groupCommitLogRewrite.js';
import { InboxJournalAdoption, lockJournal, type LockedJournal, type Segment } from './InboxJournalAdoption.js';
import { WindowReader } from './journalLines.js';
import { PendingEvents } from './PendingEvents.js';
import { readLegacyLayout, removeLegacyLayout } from './legacyInboxLayout.js';
import {
  acceptRecord,
  claimRecord,
  doneRecord,
  eventOfAcceptRecord,
  JournalIndex,
  journalName,
  journalOwner,
  seenRecord,
} from './webhookJournal.js';

/** A temporary file older than this belongs to a process that died while it wrote it. */
const ABANDONED_TEMPORARY_MS = 60_000;
/** The journal is rewritten with only its live records once it is this large and mostly dead records. */
const COMPACT_AT_BYTES = 4 * 1024 * 1024;
/**
 * Live records up to this many bytes are rewritten before the next append, which waits for it.
 * A larger backlog is copied while the appends go on (they wait only while the records appended
 * meanwhile are copied after it), and only once three quarters of the journal are dead records:
 * such a rewrite copies the whole backlog, so it must free several times what it copies.
 */
const COMPACT_LIVE_MAX_BYTES = 1024 * 1024;
/**
 * Slack kept at the end of the journal (see GroupCommitLog): the claim and done records of the
 * runs under way are written into it, so a full disk cannot keep a run's end from being recorded.
 */
const SLACK_BYTES = 64 * 1024;

/**
 * Accepted webhook events under `$AGENT_HOME/webhooks/inbox/` (docs/webhooks.md), kept as an
 * append-only journal per process (format in webhookJournal.ts):
 *
 * - `accept` appends the event's record and returns once it is on disk. Appends arriving while a
 *   write is under way go out together with one sync (GroupCommitLog), so a busy listener pays
 *   a share of one sync per event. A delivery the sender named is stored once an hour at most:
 *   its key is in the record, and the keys of the last hour are read back at start (a journal
 *   rewrite keeps those of finished events as `seen` records).
 * - Memory holds an index, not the events (PendingEvents.ts): per pending event its id, where
 *   its accept record lies (the journal, position, length), its route and whether its run
 *   started, and the delivery keys of the last hour (at most DELIVERY_MEMORY_ENTRIES).
 *   `claimNext` reads the record back by position when it hands the event out. Start-up reads
 *   the journals a chunk at a time and indexes each record from its ends, without parsing
 *   payloads (webhookJournal.ts).
 * - Claims are made in memory (the journal has one writer, this process, so no two workers can
 *   take the same event) and noted in the journal without waiting for the disk; `complete`
 *   appends a `done` record and waits for it. Both go into slack kept at the end of the journal,
 *   and an event is handed out only while the slack holds the records of every run under way
 *   and its own: on a full disk no run starts whose end could not be recorded.
 * - When the journal has grown past 4 MiB and is mostly records of finished events, it is
 *   rewritten with the live ones, streamed from the old file into the new one a chunk at a time:
 *   before the next append when they are at most 1 MiB, alongside the appends otherwise.
 *
 * The journals of dead processes are taken over on first use and at every `recover()`
 * (InboxJournalAdoption.ts): each is locked and renamed into this process's name, and its pending
 * events are indexed and read from it where it lies; it is removed once its events are done. A
 * journal under this process's own claimant (an earlier process with the same host and pid, as
 * after a container restart) is continued in place. The inbox's earlier layout (one file per
 * event, legacyInboxLayout.ts) is read once and moved in. A line that is no record is copied to
 * `damaged/`, logged, and skipped; so is a record whose payload turns out damaged when it is
 * read back (it is marked done). Bind one instance per process.
 */
@injectable()
export class FileWebhookInbox implements WebhookInbox {
  private readonly directory: string;
  private readonly damagedDir: string;
  private readonly claimant: string;
  private readonly ownPath: string;
  /** Accepted and not done, in acceptance order. */
  private live = new PendingEvents<Segment>();
  /** Bytes of the live events' records in this process's own journal (what a rewrite copies). */
  private ownLiveBytes = 0;
  /** Slack the claim and done records of the runs under way may need. */
  private reservedBytes = 0;
  private readonly segments = new Set<Segment>();
  private deliveries = new DeliveryMemory();
  private opening: Promise<GroupCommitLog> | null = null;
  /** The journal once opened (the compaction plan reads through it). */
  private openJournal: GroupCommitLog | null = null;
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
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.OrphanProcesses) orphans: OrphanProcesses,
  ) {
    this.directory = paths.webhookInboxDir;
    this.damagedDir = join(this.directory, 'damaged');
    this.claimant = identity.claimant();
    this.ownPath = join(this.directory, journalName(this.claimant));
    this.adoption = new InboxJournalAdoption(this.directory, this.claimant, clock, orphans, logger);
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
        await journal.append(acceptRecord(event, payloadJson, deliveryKey), true, (position, length) => {
          const slot = this.live.allocate(null, position, length, event.route);
          this.live.setFresh(slot, true);
          this.hold(event.id, slot);
        });
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

  /**
   * The oldest event not claimed (of a route not in `skipRoutes`), now claimed, read back from
   * its journal; null when none is waiting or its end could not be recorded. A record that turns
   * out not to be an event is set aside (and marked done), and the next event is handed out.
   */
  async claimNext(skipRoutes?: ReadonlySet<string>): Promise<WebhookEvent | null> {
    return this.guard('claim from', async () => {
      const journal = await this.journal();
      for (;;) {
        const waiting = this.firstWaiting(skipRoutes);
        if (waiting === null) return null;
        const [id, slot] = waiting;
        const room = recordRoom(id);
        if (!(await this.slackFor(journal, room))) return null;
        // Taken or completed by another call meanwhile: look again.
        if (this.live.slotOf(id) !== slot || this.live.claimed(slot)) continue;
        this.live.setClaimed(slot, true);
        this.reservedBytes += room;
        let bytes: Buffer;
        try {
          bytes = await (this.live.source(slot)?.file ?? journal.file).read(this.live.offset(slot), this.live.length(slot));
        } catch (error) {
          if (this.live.slotOf(id) === slot) {
            this.live.setClaimed(slot, false);
            this.reservedBytes -= room;
          }
          throw error;
        }
        const read = eventOfAcceptRecord(bytes);
        if (read.event === null || read.event.id !== id) {
          await this.setAside(journal, id, slot, bytes, read.problem ?? `it holds event ${read.event?.id} where ${id} was indexed`);
          continue;
        }
        // Accepted here and handed out for the first time: no earlier run can have left a record.
        const fresh = this.live.fresh(slot);
        this.live.setFresh(slot, false);
        // Losing this note costs nothing: after a crash the event runs again either way.
        const claim = claimRecord(id);
        journal
          .append(
            claim,
            false,
            () => {
              if (this.live.slotOf(id) !== slot) return;
              this.live.setClaimWritten(slot);
              this.reservedBytes -= Buffer.byteLength(claim);
            },
            true,
          )
          .catch(() => undefined);
        return { ...read.event, resumed: !fresh };
      }
    });
  }

  /** Appends the event's done record and waits for it; nothing for an id this inbox does not hold. */
  async complete(eventId: string): Promise<void> {
    await this.guard('complete in', async () => {
      const journal = await this.journal();
      const slot = this.live.slotOf(eventId);
      if (slot === undefined) return;
      await this.markDone(journal, eventId, slot);
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
    this.openJournal = null;
    await Promise.all(this.removals);
    for (const segment of this.segments) await segment.file.close();
    this.segments.clear();
  }

  /** The first event in acceptance order not claimed and not of a route in `skipRoutes`: its id and slot, or null. */
  private firstWaiting(skipRoutes: ReadonlySet<string> | undefined): [string, number] | null {
    // Without this, asking for the routes with nothing running while every waiting event is of a
    // busy route would go through the whole backlog at every claim.
    if (!this.live.anyWaitingOutside(skipRoutes)) return null;
    for (const entry of this.live.entries()) {
      if (!this.live.claimed(entry[1]) && !skipRoutes?.has(this.live.route(entry[1]))) return entry;
    }
    return null;
  }

  /** Appends the done record of the event held in `slot` and lets it go once that is on disk. */
  private async markDone(journal: GroupCommitLog, id: string, slot: number): Promise<void> {
    await journal.append(
      doneRecord(id),
      true,
      () => {
        if (this.live.slotOf(id) !== slot) return;
        const segment = this.live.source(slot);
        if (segment === null) this.ownLiveBytes -= this.live.length(slot);
        if (this.live.claimed(slot)) this.reservedBytes -= this.live.claimWritten(slot) ? Buffer.byteLength(doneRecord(id)) : recordRoom(id);
        this.live.remove(id);
        if (segment !== null) this.segmentEventDone(segment);
      },
      true,
    );
  }

  /** A record read back that is no event: copied to `damaged/`, logged, and marked done so that it is never read again. */
  private async setAside(journal: GroupCommitLog, id: string, slot: number, bytes: Buffer, problem: string): Promise<void> {
    const source = this.live.source(slot)?.path ?? this.ownPath;
    await ensurePrivateDirectory(this.damagedDir);
    const aside = join(this.damagedDir, `${basename(source)}.lines`);
    await appendFile(aside, bytes, { mode: PRIVATE_FILE_MODE });
    this.logger.error(
      `webhook inbox: the record at byte ${this.live.offset(slot)} of ${source} is not an inbox event: ${problem}; copied it to ${aside}`,
      { file: aside },
    );
    await this.markDone(journal, id, slot);
  }

  /** Whether the journal's slack holds `room` more bytes besides what the runs under way need; reported once when it does not. */
  private async slackFor(journal: GroupCommitLog, room: number): Promise<boolean> {
    if (journal.spareBytes() < this.reservedBytes + room) await journal.refillSlack();
    const enough = journal.spareBytes() >= this.reservedBytes + room;
    if (!enough && !this.diskFullReported) {
      this.logger.error(
        `webhook inbox: the disk holding ${this.directory} is full; no webhook event starts until there is room to record its end (accepted events wait)`,
      );
    }
    this.diskFullReported = !enough;
    return enough;
  }

  private hold(id: string, slot: number): void {
    this.live.hold(id, slot);
    this.count(slot);
  }

  private count(slot: number): void {
    const segment = this.live.source(slot);
    if (segment === null) this.ownLiveBytes += this.live.length(slot);
    else segment.live += 1;
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
    this.live = new PendingEvents();
    this.ownLiveBytes = 0;
    this.reservedBytes = 0;
    this.deliveries = new DeliveryMemory();
    await ensurePrivateDirectory(this.directory);
    const names = await namesInDirectory(this.directory);
    await this.removeAbandonedTemporaries(names);
    const earlierParts = names
      .filter((name) => journalOwner(name) === this.claimant && join(this.directory, name) !== this.ownPath)
      .map((name) => join(this.directory, name));
    const parts: LockedJournal[] = [];
    let journal: GroupCommitLog | null = null;
    try {
      for (const path of earlierParts) {
        const part = await lockJournal(path);
        this.segments.add(part.segment);
        parts.push(part);
      }
      const opened = await GroupCommitLog.open(this.ownPath, {
        lock: true,
        reserveBytes: SLACK_BYTES,
        protectedBytes: () => this.reservedBytes,
        compaction: (recordsBytes) => this.compactionPlan(recordsBytes),
      });
      journal = opened.log;
      this.openJournal = journal;
      const earlier = await readLegacyLayout(
        this.directory,
        this.damagedDir,
        (claimant) => claimant === this.claimant || this.identity.isAlive(claimant) === false,
        this.logger,
      );
      const index = this.newIndex();
      await index.read(this.ownPath, journal.file, opened.recordsBytes, opened.torn, (position, length, route) =>
        this.live.allocate(null, position, length, route),
      );
      await this.readSegments(index, parts);
      await this.reportDamage(index);
      this.rememberDeliveries(index);
      if (parts.length > 0) await this.keepDeliveriesOf(index, journal);
      this.live.holdAll(index.pending);
      let claims = 0;
      for (const [id, slot] of this.live.entries()) {
        this.count(slot);
        if (index.isClaimed(id)) claims += 1;
      }
      for (const { event, claimed } of earlier.events) {
        if (index.knows(event.id) || this.live.has(event.id)) continue;
        // From the earlier layout: moved into the journal.
        await journal.append(acceptRecord(event), true, (position, length) => this.hold(event.id, this.live.allocate(null, position, length, event.route)));
        if (claimed) claims += 1;
      }
      this.unreportedClaims = claims;
      this.removeFinishedSegments();
      await removeLegacyLayout(this.directory, earlier.files);
      // What dead processes left is part of the inbox from the first use on: their events, and
      // the deliveries they accepted.
      this.unreportedClaims += await this.takeOverJournalsOfDead();
      return journal;
    } catch (error) {
      this.openJournal = null;
      await journal?.close().catch(() => undefined);
      for (const part of parts) await part.segment.file.close();
      this.segments.clear();
      if (error instanceof LogInUse) throw this.inUse(error.path);
      throw error;
    }
  }

  /** An index that keeps the delivery keys of the last hour, as many as the memory of deliveries holds. */
  private newIndex(): JournalIndex<number> {
    const now = this.clock.now().getTime();
    return new JournalIndex<number>({ keep: (atMs) => now - atMs < DELIVERY_MEMORY_MS && atMs <= now, limit: DELIVERY_MEMORY_ENTRIES }, (slot) =>
      this.live.free(slot),
    );
  }

  /** The delivery keys an index found, remembered again (oldest first, as they were accepted). */
  private rememberDeliveries(index: JournalIndex<number>): void {
    for (const { key, atMs } of index.deliveries()) this.deliveries.remember(key, atMs);
  }

  /**
   * Writes the delivery keys `index` found into this process's journal, synced: read from
   * journals taken over, which are removed once their events are done, they must outlive them,
   * or a repeat of such a delivery within the hour would be accepted after the next restart.
   */
  private async keepDeliveriesOf(index: JournalIndex<number>, journal: GroupCommitLog): Promise<void> {
    const records = index.deliveries().map(({ key, atMs }) => seenRecord(key, atMs));
    if (records.length > 0) await journal.append(records.join(''), true);
  }

  private async readSegments(index: JournalIndex<number>, parts: LockedJournal[]): Promise<void> {
    for (const { segment, recordsBytes, torn } of parts) {
      await index.read(segment.path, segment.file, recordsBytes, torn, (position, length, route) => this.live.allocate(segment, position, length, route));
    }
  }

  /**
   * Takes over the journals of dead processes (InboxJournalAdoption) and indexes their pending
   * events; returns how many of those had been claimed.
   */
  private async takeOverJournalsOfDead(): Promise<number> {
    let returned = 0;
    const taken = await this.adoption.adoptDeadJournals(this.segments);
    if (taken.length === 0) return returned;
    const index = this.newIndex();
    await this.readSegments(index, taken);
    await this.reportDamage(index);
    this.rememberDeliveries(index);
    if (this.openJournal) await this.keepDeliveriesOf(index, this.openJournal);
    for (const [id, slot] of index.pending) {
      if (this.live.has(id)) {
        this.live.free(slot);
        continue;
      }
      this.hold(id, slot);
      if (index.isClaimed(id)) returned += 1;
    }
    this.removeFinishedSegments();
    return returned;
  }

  private inUse(path: string): AppError {
    return new WebhookError(
      ERROR_CODES.WEBHOOK.INBOX_UNAVAILABLE,
      `The webhook inbox journal ${path} is in use by another running process with this host name and process id; give each gateway its own AGENT_HOME or host name.`,
    );
  }

  private segmentEventDone(segment: Segment): void {
    segment.live -= 1;
    this.removeFinishedSegments();
  }

  /**
   * Removes the journals taken over once none of them holds a pending event any more, all at
   * once. One of them may hold no pending event of its own and still hold the done records of
   * events accepted in another (those its process finished after taking that one over): removed
   * alone, it would take them along, and the next process to take over would run those events
   * again.
   */
  private removeFinishedSegments(): void {
    if ([...this.segments].some((segment) => segment.live > 0)) return;
    for (const segment of [...this.segments]) {
      this.segments.delete(segment);
      this.live.forgetSource(segment);
      const removal = (async () => {
        await rm(segment.path, { force: true }).catch(() => undefined);
        await segment.file.close();
      })();
      this.removals.add(removal);
      void removal.finally(() => this.removals.delete(removal));
    }
  }

  /** A rewrite of the journal with its live records, when it has grown mostly dead (see COMPACT_LIVE_MAX_BYTES). */
  private compactionPlan(recordsBytes: number): Rewrite | null {
    if (recordsBytes <= COMPACT_AT_BYTES) return null;
    // The done records of events accepted in a journal taken over are only in this one: kept
    // until that journal is removed (a rewrite copies only this journal's own pending events).
    if (this.segments.size > 0) return null;
    const small = this.ownLiveBytes <= COMPACT_LIVE_MAX_BYTES;
    if (this.ownLiveBytes * (small ? 2 : 4) >= recordsBytes) return null;
    return {
      alongside: !small,
      copy: (into) => this.copyLiveRecords(into),
      swapped: (from, shift) => this.recordsMoved(from, shift),
    };
  }

  /**
   * Writes what a rewritten journal must say: the delivery keys of the last hour, then the
   * records of the events live in it before `into.from`, in acceptance order, each followed by
   * its claim when its run has started; read from the old file a chunk at a time.
   */
  private async copyLiveRecords(into: RewriteTarget): Promise<void> {
    const journal = this.openJournal;
    if (journal === null) throw new Error('the journal is closed');
    for (const { key, atMs } of this.deliveries.recent(this.clock.now().getTime())) await into.write(Buffer.from(seenRecord(key, atMs), 'utf8'));
    const reader = new WindowReader(journal.file);
    for (const [id, slot] of this.live.entries()) {
      if (this.live.source(slot) !== null || this.live.offset(slot) >= into.from) continue;
      const bytes = await reader.read(this.live.offset(slot), this.live.length(slot));
      // Done while it was read: its done record follows in the records appended meanwhile.
      if (this.live.slotOf(id) !== slot) continue;
      this.live.setMovedOffset(slot, into.written);
      await into.write(bytes);
      if (this.live.claimed(slot)) await into.write(Buffer.from(claimRecord(id), 'utf8'));
    }
  }

  /** The rewritten journal replaced the old one: the live events' records are where it put them. */
  private recordsMoved(from: number, shift: number): void {
    for (const [, slot] of this.live.entries()) {
      if (this.live.source(slot) !== null) continue;
      const moved = this.live.movedOffset(slot);
      if (moved >= 0) this.live.setOffset(slot, moved);
      else if (this.live.offset(slot) >= from) this.live.setOffset(slot, this.live.offset(slot) + shift);
    }
  }

  /** Warns of torn journal ends, and copies lines that are no record to `damaged/` with an error each. */
  private async reportDamage(index: JournalIndex<number>): Promise<void> {
    for (const path of index.torn) {
      this.logger.warn(`webhook inbox: ${path} ends in a record cut short (a write interrupted before it was acknowledged); it is ignored`);
    }
    for (const damaged of index.damaged) {
      await ensurePrivateDirectory(this.damagedDir);
      const aside = join(this.damagedDir, `${damaged.source.slice(this.directory.length + 1)}.lines`);
      await appendFile(aside, `${damaged.line}\n`, { mode: PRIVATE_FILE_MODE });
      this.logger.error(`webhook inbox: line ${damaged.lineNumber} of ${damaged.source} is not an inbox record: ${damaged.problem}; copied it to ${aside}`, {
        file: aside,
      });
    }
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
