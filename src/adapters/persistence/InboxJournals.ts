import { appendFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError, WebhookError } from '../../domain/errors.js';
import { CoalesceGroups } from '../../domain/webhook/coalesce.js';
import { DELIVERY_MEMORY_ENTRIES, DELIVERY_MEMORY_MS, DeliveryMemory } from '../../domain/webhook/DeliveryMemory.js';
import type { Clock } from '../../application/ports/Clock.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { OrphanProcesses } from '../../application/ports/OrphanProcesses.js';
import type { ProcessIdentity } from '../../application/ports/ProcessIdentity.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { ensurePrivateDirectory, isDurableWriteTemporary, namesInDirectory, PRIVATE_FILE_MODE } from './fileSystem.js';
import { GroupCommitLog } from './GroupCommitLog.js';
import { LogInUse } from './groupCommitLogFile.js';
import { compactionPlan, type CompactedInbox } from './inboxCompaction.js';
import { InboxJournalAdoption, lockJournal, type LockedJournal, type Segment } from './InboxJournalAdoption.js';
import { PendingEvents } from './PendingEvents.js';
import { readLegacyLayout, removeLegacyLayout } from './legacyInboxLayout.js';
import { acceptRecord, JournalIndex, journalName, journalOwner, seenRecord } from './webhookJournal.js';

/**
 * What the webhook inbox (FileWebhookInbox.ts, which describes the whole) keeps beneath its
 * operations: the index of the pending events and the slack their runs hold, this process's
 * journal opened and read on first use, the journals taken over from dead processes, and the
 * damage found in them.
 */

/** A temporary file older than this belongs to a process that died while it wrote it. */
const ABANDONED_TEMPORARY_MS = 60_000;
/**
 * Slack kept at the end of the journal (see GroupCommitLog): the claim and done records of the
 * runs under way are written into it, so a full disk cannot keep a run's end from being recorded.
 */
const SLACK_BYTES = 64 * 1024;

/** The webhook inbox's journals and index; FileWebhookInbox adds the port's operations. */
export abstract class InboxJournals {
  protected readonly directory: string;
  protected readonly damagedDir: string;
  private readonly claimant: string;
  protected readonly ownPath: string;
  /** Accepted and not done, in acceptance order. */
  protected live = new PendingEvents<Segment>();
  /** Bytes of the live events' records in this process's own journal (what a rewrite copies). */
  protected ownLiveBytes = 0;
  /** Slack the claim and done records of the runs under way may need. */
  protected reservedBytes = 0;
  protected readonly segments = new Set<Segment>();
  protected deliveries = new DeliveryMemory();
  protected opening: Promise<GroupCommitLog> | null = null;
  /** The journal once opened (the compaction plan reads through it). */
  protected openJournal: GroupCommitLog | null = null;
  /** Claims left by an earlier process under this claimant, reported by the first `recover()`. */
  protected unreportedClaims = 0;
  /** The groups of coalesced events not handed out yet; their events are held (marked claimed) in `live`. */
  protected readonly groups = new CoalesceGroups();
  /** Groups handed out before (a close record says so) and not done, to hand out again: their members. */
  protected readonly closedWaiting = new Map<string, string[]>();
  /** Groups handed out by this process and not completed: their members. */
  protected readonly runningGroups = new Map<string, string[]>();
  private readonly adoption: InboxJournalAdoption;
  protected readonly removals = new Set<Promise<void>>();

  constructor(
    protected readonly paths: AgentPaths,
    private readonly identity: ProcessIdentity,
    protected readonly clock: Clock,
    protected readonly logger: Logger,
    orphans: OrphanProcesses,
  ) {
    this.directory = paths.webhookInboxDir;
    this.damagedDir = join(this.directory, 'damaged');
    this.claimant = identity.claimant();
    this.ownPath = join(this.directory, journalName(this.claimant));
    this.adoption = new InboxJournalAdoption(this.directory, this.claimant, clock, orphans, logger);
  }

  protected hold(id: string, slot: number): void {
    this.live.hold(id, slot);
    this.count(slot);
  }

  private count(slot: number): void {
    const segment = this.live.source(slot);
    if (segment === null) this.ownLiveBytes += this.live.length(slot);
    else segment.live += 1;
  }

  /** This process's journal, started on first use from what earlier processes under this claimant left. */
  protected journal(): Promise<GroupCommitLog> {
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
    this.groups.clear();
    this.closedWaiting.clear();
    this.runningGroups.clear();
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
        // A rewrite keeps no close records: none while a group handed out is not done.
        compaction: (recordsBytes) =>
          this.runningGroups.size > 0 || this.closedWaiting.size > 0 ? null : compactionPlan(this.compacted(), recordsBytes),
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
        await journal.append(acceptRecord(event), true, (position, length) =>
          this.hold(event.id, this.live.allocate(null, position, length, event.route)),
        );
        if (claimed) claims += 1;
      }
      this.unreportedClaims = claims + this.regroup(index);
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
    return new JournalIndex<number>(
      { keep: (atMs) => now - atMs < DELIVERY_MEMORY_MS && atMs <= now, limit: DELIVERY_MEMORY_ENTRIES },
      (slot) => this.live.free(slot),
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
      await index.read(segment.path, segment.file, recordsBytes, torn, (position, length, route) =>
        this.live.allocate(segment, position, length, route),
      );
    }
  }

  /**
   * Takes over the journals of dead processes (InboxJournalAdoption) and indexes their pending
   * events; returns how many of those had been claimed.
   */
  protected async takeOverJournalsOfDead(): Promise<number> {
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
    returned += this.regroup(index);
    this.removeFinishedSegments();
    return returned;
  }

  /**
   * Puts the pending coalesced events an index found back in their groups: those of a group
   * handed out before (a close record) wait to be handed out again as that group, the others
   * join the open groups of their keys. Their events are held (marked claimed), so that none is
   * handed out alone. Returns how many groups were handed out before.
   */
  private regroup(index: JournalIndex<number>): number {
    if (index.coalesced.size === 0) return 0;
    const inClosed = new Set<string>();
    let returned = 0;
    for (const [groupId, members] of index.closedGroups) {
      const pending = members.filter((id) => this.live.has(id));
      if (pending.length === 0 || this.closedWaiting.has(groupId) || this.runningGroups.has(groupId)) continue;
      this.closedWaiting.set(groupId, pending);
      for (const id of pending) inClosed.add(id);
      returned += 1;
    }
    for (const [id, { route, receivedAtMs, coalesce }] of index.coalesced) {
      const slot = this.live.slotOf(id);
      if (slot === undefined || this.live.claimed(slot)) continue;
      this.live.setClaimed(slot, true);
      if (!inClosed.has(id)) this.groups.add({ id, route, receivedAtMs, coalesce });
    }
    return returned;
  }

  private inUse(path: string): AppError {
    return new WebhookError(
      ERROR_CODES.WEBHOOK.INBOX_UNAVAILABLE,
      `The webhook inbox journal ${path} is in use by another running process with this host name and process id; give each gateway its own AGENT_HOME or host name.`,
    );
  }

  protected segmentEventDone(segment: Segment): void {
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

  /** What the compaction of the journal reads of this inbox (inboxCompaction.ts). */
  private compacted(): CompactedInbox {
    return {
      clock: this.clock,
      live: () => this.live,
      ownLiveBytes: () => this.ownLiveBytes,
      segments: () => this.segments,
      deliveries: () => this.deliveries,
      openJournal: () => this.openJournal,
    };
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
      this.logger.error(
        `webhook inbox: line ${damaged.lineNumber} of ${damaged.source} is not an inbox record: ${damaged.problem}; copied it to ${aside}`,
        {
          file: aside,
        },
      );
    }
  }

  private async removeAbandonedTemporaries(names: string[]): Promise<void> {
    const now = this.clock.now().getTime();
    for (const name of names.filter(isDurableWriteTemporary)) {
      const path = join(this.directory, name);
      const modified = await stat(path).then(
        (info) => info.mtimeMs,
        () => now,
      );
      if (now - modified > ABANDONED_TEMPORARY_MS) await rm(path, { force: true });
    }
  }
}
