import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../application/ports/Clock.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { OrphanProcesses } from '../../application/ports/OrphanProcesses.js';
import { tryLockFile } from './fileLock.js';
import { errnoCode, namesInDirectory, syncDirectory } from './fileSystem.js';
import { LogInUse } from './groupCommitLogFile.js';
import { intactEnd, RecordFile } from './journalLines.js';
import { journalName, journalOwner } from './webhookJournal.js';

/**
 * A journal taken over from a dead process (or left by an earlier one under this claimant), kept
 * as it is: its pending events' records are read from it by position when they are handed out.
 */
export interface Segment {
  path: string;
  /** Open and locked for as long as it is kept, so that nobody else takes it over. */
  file: RecordFile;
  /** Its events not yet done; it is removed when none is left. */
  live: number;
}

/** A journal locked for keeping as a segment, and how far its intact records go. */
export interface LockedJournal {
  segment: Segment;
  /** Bytes of intact records at its start (read them through `segment.file`). */
  recordsBytes: number;
  /** It ends in a record cut short, which is not part of its records. */
  torn: boolean;
}

/**
 * Opens and locks a journal for keeping as a segment, and finds where its intact records end
 * (reading its tail only). Throws LogInUse when its owner lives.
 */
export async function lockJournal(path: string): Promise<LockedJournal> {
  const handle = await open(path, 'r+');
  try {
    if (!(await tryLockFile(handle))) throw new LogInUse(path);
    const file = new RecordFile(handle);
    const { size } = await handle.stat();
    const { length, torn } = await intactEnd(file, size);
    return { segment: { path, file, live: 0 }, recordsBytes: length, torn };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/**
 * How one inbox takes over the journals of dead processes. Each journal is held with the
 * kernel's lock for as long as its process has it open, so a journal whose lock is free belongs
 * to a dead process, however it died (zombies and reused pids included). It is locked, renamed
 * into the adopting process's name (`journal-<claimant>+<n>.ndjson`), and the processes its owner
 * started are killed: an orphaned agent must not finish a run that is about to run again. Nothing
 * is copied, so taking over needs no free space; the inbox indexes the pending events of the
 * journal where it lies and reads each one's record from it when it hands the event out.
 */
export class InboxJournalAdoption {
  private adoptions = 0;

  constructor(
    private readonly directory: string,
    private readonly claimant: string,
    private readonly clock: Clock,
    private readonly orphans: OrphanProcesses,
    private readonly log: Logger,
  ) {}

  /**
   * Adopts every journal in the directory whose lock is free and that is not this claimant's;
   * returns them, renamed and locked. Each is added to `segments` once locked, so that the inbox
   * lets go of it whatever happens next.
   */
  async adoptDeadJournals(segments: Set<Segment>): Promise<Array<LockedJournal & { owner: string }>> {
    const taken: Array<LockedJournal & { owner: string }> = [];
    for (const name of await namesInDirectory(this.directory)) {
      const owner = journalOwner(name);
      if (owner === null || owner === this.claimant) continue;
      const part = await lockJournal(join(this.directory, name)).catch((error: unknown) => {
        if (errnoCode(error) === 'ENOENT' || error instanceof LogInUse) return null;
        throw error;
      });
      if (part === null) continue;
      segments.add(part.segment);
      this.adoptions += 1;
      const adopted = join(this.directory, journalName(this.claimant, `${this.clock.now().getTime()}-${this.adoptions}`));
      try {
        await rename(part.segment.path, adopted);
      } catch (error) {
        await part.segment.file.close();
        segments.delete(part.segment);
        // Taken over and removed by another process between our open and our lock.
        if (errnoCode(error) === 'ENOENT') continue;
        throw error;
      }
      part.segment.path = adopted;
      taken.push({ ...part, owner });
    }
    if (taken.length === 0) return taken;
    await syncDirectory(this.directory);
    for (const owner of new Set(taken.map((part) => part.owner))) {
      const killed = await this.orphans.killOrphansOf(owner);
      if (killed > 0)
        this.log.warn(
          `webhook inbox: killed ${killed} process(es) left running by ${owner}, which is gone, before running its events again`,
        );
    }
    return taken;
  }
}
