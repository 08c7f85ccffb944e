import { unwatchFile, watch, watchFile, type FSWatcher, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';

/** How often the file's status is polled, in case change notifications do not arrive. */
const POLL_INTERVAL_MS = 500;

/**
 * Calls `onChange` when the file at `path` may have changed: written in place, or replaced by a
 * rename (how the stores write), or created. Notifications come from the directory (inotify and
 * its kin), backed by polling the file's status twice a second for file systems that send none
 * (network mounts, some containers) and for a directory that does not exist yet. Nothing here
 * keeps the process alive. Returns the function that stops watching.
 */
export function watchStoreFile(path: string, onChange: () => void): () => void {
  const name = basename(path);
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
      if (changed === null || String(changed) === name) onChange();
    });
    // A directory removed under the watch: the polling goes on.
    watcher.on('error', () => watcher?.close());
  } catch {
    // No directory yet: polling sees the file when it appears.
  }
  const poll = (current: Stats, previous: Stats) => {
    if (current.mtimeMs !== previous.mtimeMs || current.ino !== previous.ino || current.size !== previous.size) onChange();
  };
  watchFile(path, { interval: POLL_INTERVAL_MS, persistent: false }, poll);
  return () => {
    watcher?.close();
    unwatchFile(path, poll);
  };
}
