import type { DeliveryMemory } from '../../domain/webhook/DeliveryMemory.js';
import type { Clock } from '../../application/ports/Clock.js';
import type { GroupCommitLog } from './GroupCommitLog.js';
import type { Rewrite, RewriteTarget } from './groupCommitLogRewrite.js';
import type { Segment } from './InboxJournalAdoption.js';
import { WindowReader } from './journalLines.js';
import type { PendingEvents } from './PendingEvents.js';
import { claimRecord, seenRecord } from './webhookJournal.js';

/**
 * The compaction of the webhook inbox's journal (FileWebhookInbox.ts): when a rewrite is due, how
 * the live records are copied into the new file, and where they are once it replaced the old one.
 */

/** The journal is rewritten with only its live records once it is this large and mostly dead records. */
const COMPACT_AT_BYTES = 4 * 1024 * 1024;
/**
 * Live records up to this many bytes are rewritten before the next append, which waits for it.
 * A larger backlog is copied while the appends go on (they wait only while the records appended
 * meanwhile are copied after it), and only once three quarters of the journal are dead records:
 * such a rewrite copies the whole backlog, so it must free several times what it copies.
 */
const COMPACT_LIVE_MAX_BYTES = 1024 * 1024;

/** What a rewrite of the journal reads of its inbox, each part read at the moment it is needed. */
export interface CompactedInbox {
  readonly clock: Clock;
  /** Accepted and not done, in acceptance order. */
  live(): PendingEvents<Segment>;
  /** Bytes of the live events' records in this process's own journal (what a rewrite copies). */
  ownLiveBytes(): number;
  /** The journals taken over and not yet removed. */
  segments(): ReadonlySet<Segment>;
  deliveries(): DeliveryMemory;
  /** The journal once opened. */
  openJournal(): GroupCommitLog | null;
}

/** A rewrite of the journal with its live records, when it has grown mostly dead (see COMPACT_LIVE_MAX_BYTES). */
export function compactionPlan(inbox: CompactedInbox, recordsBytes: number): Rewrite | null {
  if (recordsBytes <= COMPACT_AT_BYTES) return null;
  // The done records of events accepted in a journal taken over are only in this one: kept
  // until that journal is removed (a rewrite copies only this journal's own pending events).
  if (inbox.segments().size > 0) return null;
  const small = inbox.ownLiveBytes() <= COMPACT_LIVE_MAX_BYTES;
  if (inbox.ownLiveBytes() * (small ? 2 : 4) >= recordsBytes) return null;
  return {
    alongside: !small,
    copy: (into) => copyLiveRecords(inbox, into),
    swapped: (from, shift) => recordsMoved(inbox, from, shift),
  };
}

/**
 * Writes what a rewritten journal must say: the delivery keys of the last hour, then the
 * records of the events live in it before `into.from`, in acceptance order, each followed by
 * its claim when its run has started; read from the old file a chunk at a time.
 */
async function copyLiveRecords(inbox: CompactedInbox, into: RewriteTarget): Promise<void> {
  const journal = inbox.openJournal();
  if (journal === null) throw new Error('the journal is closed');
  for (const { key, atMs } of inbox.deliveries().recent(inbox.clock.now().getTime()))
    await into.write(Buffer.from(seenRecord(key, atMs), 'utf8'));
  const reader = new WindowReader(journal.file);
  for (const [id, slot] of inbox.live().entries()) {
    if (inbox.live().source(slot) !== null || inbox.live().offset(slot) >= into.from) continue;
    const bytes = await reader.read(inbox.live().offset(slot), inbox.live().length(slot));
    // Done while it was read: its done record follows in the records appended meanwhile.
    if (inbox.live().slotOf(id) !== slot) continue;
    inbox.live().setMovedOffset(slot, into.written);
    await into.write(bytes);
    if (inbox.live().claimed(slot)) await into.write(Buffer.from(claimRecord(id), 'utf8'));
  }
}

/** The rewritten journal replaced the old one: the live events' records are where it put them. */
function recordsMoved(inbox: CompactedInbox, from: number, shift: number): void {
  for (const [, slot] of inbox.live().entries()) {
    if (inbox.live().source(slot) !== null) continue;
    const moved = inbox.live().movedOffset(slot);
    if (moved >= 0) inbox.live().setOffset(slot, moved);
    else if (inbox.live().offset(slot) >= from) inbox.live().setOffset(slot, inbox.live().offset(slot) + shift);
  }
}
