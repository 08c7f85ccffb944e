import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode } from './fileSystem.js';

/** A directory is listed again after this many records were added to it (or `keep`, when fewer), to prune what other processes added too. */
const RELIST_EVERY = 50;

/** What this process knows of one directory of records: listed once, then kept up to date by its own saves. */
export interface KnownDirectory {
  /** Record file names, oldest first (names begin with their time). */
  names: string[];
  /** Record id → its file name. */
  byId: Map<string, string>;
  /** Records added since the directory was last listed. */
  addedSinceListing: number;
  /** Records added since the oldest were last removed. */
  addedSincePruning: number;
}

/**
 * How many records are added between two prunings of a directory keeping `keep`: a tenth of it,
 * at most RELIST_EVERY, so that the oldest are removed in a burst now and then rather than one at
 * every save; readers apply `keep` themselves, so the few beyond it never show.
 */
export function pruneEvery(keep: number): number {
  return Math.max(1, Math.min(RELIST_EVERY, Math.ceil(keep / 10)));
}

/**
 * Directories holding one file per record, named so that they sort by time and carry the
 * record's id (`idOfName`), of which the newest `keep` are kept: each is listed once by this
 * process and then followed through its own saves, and listed again every RELIST_EVERY new
 * records for what other processes added. The oldest are removed in a batch every
 * pruneEvery(keep) new records, one unlink each, never with a listing per save. Shared by the
 * webhook run records and the run ledger.
 */
export class RecordDirectories {
  private readonly directories = new Map<string, Promise<KnownDirectory>>();

  constructor(private readonly idOfName: (name: string) => string | null) {}

  /** What is known of `directory` (listed at its first use here); nothing is created. */
  known(directory: string): Promise<KnownDirectory> {
    let known = this.directories.get(directory);
    if (known === undefined) {
      known = this.listed(directory);
      this.directories.set(directory, known);
      // A listing that failed is tried again at the next use.
      known.catch(() => this.directories.delete(directory));
    }
    return known;
  }

  private async listed(directory: string): Promise<KnownDirectory> {
    const names = await this.namesIn(directory);
    return { names, byId: new Map(names.map((name) => [this.idOfName(name)!, name])), addedSinceListing: 0, addedSincePruning: 0 };
  }

  /** The record file names in `directory`, oldest first; none when it does not exist. Throws what else the file system says. */
  async namesIn(directory: string): Promise<string[]> {
    try {
      const entries = await readdir(directory, { withFileTypes: true });
      return entries
        .filter((entry) => entry.isFile() && this.idOfName(entry.name) !== null)
        .map((entry) => entry.name)
        .sort();
    } catch (error) {
      if (['ENOENT', 'ENOTDIR'].includes(errnoCode(error) ?? '')) return [];
      throw error;
    }
  }

  /**
   * Takes note of the record `name` just written to `directory`, and every pruneEvery(keep)
   * records removes the oldest beyond `keep` and those `expired` says are too old, never that
   * one, nor those `pinned` says are still in use (a run under way: they go at a later pruning).
   * Returns the ids removed.
   */
  async added(
    directory: string,
    name: string,
    keep: number,
    expired: (name: string) => boolean = () => false,
    pinned: (name: string) => boolean = () => false,
  ): Promise<string[]> {
    const known = await this.known(directory);
    const id = this.idOfName(name)!;
    if (known.byId.has(id)) return [];
    known.byId.set(id, name);
    insertSorted(known.names, name);
    known.addedSinceListing += 1;
    known.addedSincePruning += 1;
    // A directory holding far more than `keep` (records pinned by runs under way) is gone through
    // once per tenth of its surplus added, not every pruneEvery(keep): ten thousand runs in flight
    // made each pruning a look at ten thousand names.
    if (known.addedSincePruning < Math.max(pruneEvery(keep), Math.ceil((known.names.length - keep) / 10))) return [];
    known.addedSincePruning = 0;
    if (known.addedSinceListing >= Math.min(RELIST_EVERY, keep)) {
      known.addedSinceListing = 0;
      for (const each of await this.namesIn(directory)) {
        const eachId = this.idOfName(each)!;
        if (known.byId.has(eachId)) continue;
        known.byId.set(eachId, each);
        insertSorted(known.names, each);
      }
    }
    const others = known.names.filter((each) => each !== name && !pinned(each));
    const surplus = Math.max(0, known.names.length - keep);
    const removed = new Set([...others.slice(0, surplus), ...others.filter(expired)]);
    if (removed.size === 0) return [];
    known.names = known.names.filter((each) => !removed.has(each));
    const ids: string[] = [];
    await Promise.all(
      [...removed].map((each) => {
        const eachId = this.idOfName(each)!;
        known.byId.delete(eachId);
        ids.push(eachId);
        return unlink(join(directory, each)).catch((error: unknown) => {
          if (errnoCode(error) !== 'ENOENT') throw error;
        });
      }),
    );
    return ids;
  }
}

/** Inserts `name` into the sorted `names` where it belongs. */
function insertSorted(names: string[], name: string): void {
  let low = 0;
  let high = names.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (names[middle]! < name) low = middle + 1;
    else high = middle;
  }
  names.splice(low, 0, name);
}
