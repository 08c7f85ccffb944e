import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import type { AgentPaths } from '../../application/ports/Settings.js';
import type { WebhookBacklog } from '../../application/ports/WebhookBacklog.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { WebhookError } from '../../domain/errors.js';
import { fileStoreError, errnoCode, isDurableWriteTemporary } from './fileSystem.js';
import { intactEnd, RecordFile } from './journalLines.js';
import { legacyEventFiles, legacyEventOf } from './legacyInboxLayout.js';
import { JournalIndex, journalOwner } from './webhookJournal.js';

/**
 * Counts the events waiting in `$AGENT_HOME/webhooks/inbox/` by reading its journals (and the
 * one-file-per-event layout of earlier versions) as they stand: nothing is opened for writing and
 * no journal's lock is taken, so the gateway owning them is never disturbed. A record being
 * appended at that instant is not counted yet; damaged lines are skipped (the inbox itself sets
 * them aside when it next reads them). Journals are read a chunk at a time and indexed without
 * parsing payloads, so counting a large backlog holds an id per waiting event, not the events.
 */
@injectable()
export class FileWebhookBacklog implements WebhookBacklog {
  constructor(@inject(TOKENS.AgentPaths) private readonly paths: AgentPaths) {}

  async waiting(): Promise<number> {
    const directory = this.paths.webhookInboxDir;
    try {
      const index = new JournalIndex<true>();
      for (const name of (await namesIn(directory)).sort()) {
        if (journalOwner(name) !== null) await indexIfPresent(index, join(directory, name));
      }
      let loose = 0;
      for (const file of await legacyEventFiles(directory, namesIn)) {
        if (isDurableWriteTemporary(file.name)) continue;
        const text = await readIfPresent(file.path);
        if (text === null) continue;
        // A file that is no event is not counted: the inbox moves it aside when it next starts.
        const { event } = legacyEventOf(text);
        if (event !== null && !index.knows(event.id)) loose += 1;
      }
      return index.pending.size + loose;
    } catch (error) {
      throw new WebhookError(
        ERROR_CODES.WEBHOOK.INBOX_UNAVAILABLE,
        `${fileStoreError('read', `the webhook inbox ${directory}`, error)}; make it readable by this user.`,
        { cause: error },
      );
    }
  }
}

/** Names in `directory`; none when it does not exist (or is not a directory). */
async function namesIn(directory: string): Promise<string[]> {
  try {
    return await readdir(directory);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}

/**
 * Indexes the journal at `path` up to its last whole record as it stands (the record being
 * appended, if any, is left out); nothing when it was renamed away meanwhile (a takeover, a
 * compaction).
 */
async function indexIfPresent(index: JournalIndex<true>, path: string): Promise<void> {
  let file: RecordFile;
  try {
    file = new RecordFile(await open(path, 'r'));
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return;
    throw error;
  }
  try {
    const { size } = await file.handle.stat();
    const { length } = await intactEnd(file, size);
    await index.read(path, file, length, false, () => true);
  } finally {
    await file.close();
  }
}

/** A file renamed away between listing and reading (a takeover, a compaction) is no longer there. */
async function readIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw error;
  }
}
