import { appendFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError, WebhookError } from '../../domain/errors.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import type { Clock } from '../../application/ports/Clock.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { OrphanProcesses } from '../../application/ports/OrphanProcesses.js';
import type { ProcessIdentity } from '../../application/ports/ProcessIdentity.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { WebhookInbox } from '../../application/ports/WebhookInbox.js';
import { fileStoreError, ensurePrivateDirectory, PRIVATE_FILE_MODE } from './fileSystem.js';
import type { GroupCommitLog } from './GroupCommitLog.js';
import { InboxJournals } from './InboxJournals.js';
import { groupRunEvent } from '../../domain/webhook/coalesce.js';
import { acceptRecord, claimRecord, closeRecord, doneRecord, eventOfAcceptRecord } from './webhookJournal.js';

/** The largest accept record read back on the event loop's thread (RecordFile.readNow) when it is handed out. */
const NOW_READ_MAX_BYTES = 64 * 1024;

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
export class FileWebhookInbox extends InboxJournals implements WebhookInbox {
  private recovering: Promise<number> | null = null;
  private diskFullReported = false;

  constructor(
    @inject(TOKENS.AgentPaths) paths: AgentPaths,
    @inject(TOKENS.ProcessIdentity) identity: ProcessIdentity,
    @inject(TOKENS.Clock) clock: Clock,
    @inject(TOKENS.Logger) logger: Logger,
    @inject(TOKENS.OrphanProcesses) orphans: OrphanProcesses,
  ) {
    super(paths, identity, clock, logger, orphans);
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
          if (event.coalesce !== undefined) this.holdForGroup(event, slot);
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
      if (this.groups.size > 0 || this.closedWaiting.size > 0) {
        const group = await this.claimGroup(journal, skipRoutes);
        if (group !== null) return group;
      }
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
          const file = this.live.source(slot)?.file ?? journal.file;
          const [offset, length] = [this.live.offset(slot), this.live.length(slot)];
          // Claims are made one at a time: an event this process just accepted is read from the
          // page cache at once, not behind every file operation of the runs under way.
          bytes = this.live.fresh(slot) && length <= NOW_READ_MAX_BYTES ? file.readNow(offset, length) : await file.read(offset, length);
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
      if (this.runningGroups.size > 0 && this.runningGroups.has(eventId)) return this.completeGroup(journal, eventId);
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

  /** An accepted event of a coalescing route: held (marked claimed, so never handed out alone) in its group. */
  private holdForGroup(event: WebhookEvent, slot: number): void {
    this.live.setClaimed(slot, true);
    this.groups.add({ id: event.id, route: event.route, receivedAtMs: Date.parse(event.receivedAt), coalesce: event.coalesce! });
  }

  /**
   * A group to hand out as one run, or null: first one handed out before a restart (as it was
   * then), else the oldest whose window has passed on the clock, closed now by a synced close
   * record, so that events accepted later never join it, after a restart either.
   */
  private async claimGroup(journal: GroupCommitLog, skipRoutes: ReadonlySet<string> | undefined): Promise<WebhookEvent | null> {
    let chosen: { id: string; members: string[]; resumed: boolean } | null = null;
    for (const [id, members] of this.closedWaiting) {
      const slot = this.live.slotOf(members[0]!);
      if (slot !== undefined && !skipRoutes?.has(this.live.route(slot))) {
        chosen = { id, members, resumed: true };
        break;
      }
    }
    const room = (members: string[]) => members.reduce((sum, id) => sum + Buffer.byteLength(doneRecord(id)), 0);
    if (chosen === null) {
      const due = this.groups.due(this.clock.now().getTime(), skipRoutes);
      if (due === null) return null;
      const members = due.members.map((member) => member.id);
      const close = closeRecord(due.id, members);
      if (!(await this.slackFor(journal, room(members) + Buffer.byteLength(close)))) return null;
      // Closed before the write, so that an event accepted meanwhile opens the next group.
      this.groups.close(due);
      try {
        await journal.append(close, true);
      } catch (error) {
        this.closedWaiting.set(due.id, members);
        throw error;
      }
      chosen = { id: due.id, members, resumed: false };
    } else {
      if (!(await this.slackFor(journal, room(chosen.members)))) return null;
      this.closedWaiting.delete(chosen.id);
    }
    // Each member's done record is reserved as if its claim were written: markDone lets go of it.
    for (const id of chosen.members) {
      const slot = this.live.slotOf(id);
      if (slot === undefined || this.live.claimWritten(slot)) continue;
      this.live.setClaimWritten(slot);
      this.reservedBytes += Buffer.byteLength(doneRecord(id));
    }
    this.runningGroups.set(chosen.id, chosen.members);
    const events: WebhookEvent[] = [];
    try {
      for (const id of chosen.members) {
        const slot = this.live.slotOf(id);
        if (slot === undefined) continue;
        const file = this.live.source(slot)?.file ?? journal.file;
        const read = eventOfAcceptRecord(await file.read(this.live.offset(slot), this.live.length(slot)));
        if (read.event === null || read.event.id !== id) {
          this.logger.error(
            `webhook inbox: the record of event ${id} of a coalesced group is not an inbox event: ${read.problem}; left out of its run`,
          );
          continue;
        }
        events.push(read.event);
      }
    } catch (error) {
      // Handed out again at the next claim (its done records stay reserved until then).
      this.runningGroups.delete(chosen.id);
      this.closedWaiting.set(chosen.id, chosen.members);
      throw error;
    }
    if (events.length === 0) {
      await this.completeGroup(journal, chosen.id);
      return null;
    }
    return groupRunEvent(chosen.id, events, chosen.resumed);
  }

  /** Appends the done records of every event of a group handed out, and lets them go. */
  private async completeGroup(journal: GroupCommitLog, groupId: string): Promise<void> {
    const members = this.runningGroups.get(groupId)!;
    const done: Array<Promise<void>> = [];
    for (const id of members) {
      const slot = this.live.slotOf(id);
      if (slot === undefined) continue;
      done.push(this.markDone(journal, id, slot));
    }
    await Promise.all(done);
    this.runningGroups.delete(groupId);
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
        if (this.live.claimed(slot))
          this.reservedBytes -= this.live.claimWritten(slot) ? Buffer.byteLength(doneRecord(id)) : recordRoom(id);
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
    // Thousands of runs at once need more than the slack the journal opened with: it grows to
    // twice what they hold (a disk too full for that keeps the events waiting, as below).
    if (this.reservedBytes + room > journal.spareBytes()) await journal.reserveAtLeast(2 * (this.reservedBytes + room));
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

  private async guard<T>(action: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new WebhookError(
        ERROR_CODES.WEBHOOK.INBOX_UNAVAILABLE,
        `${fileStoreError(action, `the webhook inbox ${this.paths.webhookInboxDir}`, error)}; make it a directory this user can write to, or set AGENT_HOME to one.`,
        { cause: error },
      );
    }
  }
}

/** The claim and done records of an event, which the slack must have room for while it runs. */
function recordRoom(eventId: string): number {
  return Buffer.byteLength(claimRecord(eventId)) + Buffer.byteLength(doneRecord(eventId));
}
